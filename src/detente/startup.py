"""Knowing whether a server started, and why not: the exception its start-up raised,
kept for the process that runs it.

uvicorn logs a failed ASGI lifespan (the app's warm-up, the MCP session manager) and
returns from ``Server.run`` with ``started`` still False; the exception itself stays
inside its log record. :func:`watch_lifespan` wraps an app's lifespan so the first
exception raised before the app is ready is kept in a :class:`StartupRecord`, and
:meth:`StartupRecord.raise_if_failed` turns it into
:class:`~detente.errors.StartupFailed`, whose one line names the innermost cause. The CLI
prints that line last, so ``detente serve`` and ``detente demo`` end on the cause
(``ModuleNotFoundError: No module named '...'``) instead of a follow-on error.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from detente.errors import StartupFailed

__all__ = ["StartupRecord", "watch_lifespan"]


class StartupRecord:
    """What one server's start-up came to (thread-safe).

    Attributes:
        failure: the exception the lifespan raised before the app was ready, or None.
    """

    def __init__(self) -> None:
        self.failure: BaseException | None = None
        self._done = threading.Event()

    def failed(self, exc: BaseException) -> None:
        """Record that start-up raised ``exc`` (the first one is kept)."""
        if self.failure is None:
            self.failure = exc
        self._done.set()

    def finished(self) -> None:
        """Record that start-up is over (the server serves, or has given up)."""
        self._done.set()

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for start-up to be over; True if it is."""
        return self._done.wait(timeout)

    def raise_if_failed(self, started: bool) -> None:
        """Raise when the server did not start.

        Args:
            started: whether the server reports itself started (``uvicorn.Server.started``).

        Raises:
            StartupFailed: ``startup_failed``, naming the recorded cause, when it did not.
        """
        if self.failure is not None or not started:
            raise StartupFailed.caused_by(self.failure)


LifespanFactory = Callable[[Any], contextlib.AbstractAsyncContextManager[Any]]


def watch_lifespan(inner: LifespanFactory, record: StartupRecord) -> LifespanFactory:
    """``inner`` (an app's lifespan context factory), recording in ``record`` the exception
    it raises before yielding; exceptions at shutdown pass through unrecorded."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        ready = False
        try:
            async with inner(app) as state:
                ready = True
                record.finished()
                yield state
        except BaseException as exc:
            if not ready:
                record.failed(exc)
            raise

    return lifespan
