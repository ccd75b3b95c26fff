"""The service's clock, read once per group-committed batch (:class:`BatchClock`).

A batch (:mod:`detente.service.group_commit`) pins the time when its transaction begins;
every command, expiry and event ``at`` of the batch reads that one value.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from detente.clock import Clock

__all__ = ["BatchClock"]


class BatchClock:
    """The service's clock, read once per batch.

    Inside a batch's transaction every command, every expiry and every event's ``at`` use
    the time read when the transaction began (as SQL's ``now()`` is the transaction's
    start): one reading per batch, not three per command, which on PostgreSQL and SQLite
    is a query each (:mod:`detente.storage.clock`). Outside a batch it reads ``inner``.

    Args:
        inner: the time authority.
    """

    def __init__(self, inner: Clock) -> None:
        self.inner = inner
        self._local = threading.local()

    def now(self) -> datetime:
        """The batch's time on a thread running one, else ``inner.now()``."""
        pinned: datetime | None = getattr(self._local, "at", None)
        return pinned if pinned is not None else self.inner.now()

    @contextmanager
    def pinned(self) -> Iterator[datetime]:
        """Read ``inner`` once and answer that on this thread until the block exits."""
        before = getattr(self._local, "at", None)
        self._local.at = at = self.inner.now()
        try:
            yield at
        finally:
            self._local.at = before
