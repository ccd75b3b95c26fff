"""The health of a store's change watch (etcd watch, PostgreSQL ``LISTEN``).

A watch that fails (a member gone, no leader, a compacted revision, a dropped
connection, or a bug in a listener) is re-established after a delay that doubles from
``initial`` to ``maximum`` seconds and resets once the watch is up again. Every failure
is logged on ``detente.storage`` (WARNING, with the endpoint and the traceback) instead
of being swallowed, and ``GET /healthz`` reports the state under ``storeWatch``.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Literal

__all__ = ["WatchHealth"]

_log = logging.getLogger("detente.storage")


class WatchHealth:
    """State, reconnect count and last error of one watch; thread-safe.

    Args:
        name: what is watched, for the log (``etcd watch``, ``postgres listen``).
        initial: seconds before the first retry.
        maximum: the longest delay between retries, in seconds.
    """

    def __init__(self, name: str, *, initial: float = 0.2, maximum: float = 5.0) -> None:
        self.name = name
        self.initial = initial
        self.maximum = maximum
        self.state: Literal["starting", "watching", "reconnecting"] = "starting"
        self.restarts = 0
        self.last_error: str | None = None
        self._delay = initial
        self._lock = threading.Lock()

    def connected(self) -> None:
        """The watch is up: the next failure waits ``initial`` again."""
        with self._lock:
            self.state = "watching"
            self._delay = self.initial

    def failed(self, exc: BaseException, endpoint: str | None = None) -> float:
        """Record and log a failure; returns the seconds to wait before retrying."""
        with self._lock:
            self.state = "reconnecting"
            self.restarts += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            delay = self._delay
            self._delay = min(self._delay * 2, self.maximum)
        _log.warning(
            "%s failed; retrying in %.1f s",
            self.name,
            delay,
            exc_info=exc,
            extra={"watch": self.name, "endpoint": endpoint, "restarts": self.restarts},
        )
        return delay

    def to_wire(self) -> dict[str, Any]:
        """``{"state", "restarts", "lastError"}`` for ``/healthz``."""
        with self._lock:
            return {"state": self.state, "restarts": self.restarts, "lastError": self.last_error}
