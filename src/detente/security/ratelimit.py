"""Rate limits per principal and per agent session (``[limits]`` in ``detente.toml``).

Each limited action (``claim-open``, ``agent-register``) allows at most N actions within a
sliding window of W seconds, counted separately per principal and per session. The
count is a sliding log: the times of the last N accepted actions per key, so an action
is refused exactly when N others happened within the last W seconds, and the refusal
says when the oldest of them leaves the window (``Retry-After``). Memory is bounded by N
entries per key. Time is the server's clock (injectable: tests use the fake clock).
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Protocol

from detente.errors import RateLimited

__all__ = ["Limit", "RateLimiter"]


class Limit(Protocol):
    """One action's limit (:class:`detente.config.RateLimit`)."""

    @property
    def per_principal(self) -> int | None: ...

    @property
    def per_session(self) -> int | None: ...

    @property
    def window_seconds(self) -> int: ...


class RateLimiter:
    """Counts limited actions (thread-safe).

    Args:
        limits: action -> its limit (an action without one is unlimited).
        now: the server's clock.
    """

    def __init__(self, limits: Mapping[str, Limit], now: Callable[[], datetime]) -> None:
        self.limits = dict(limits)
        self.now = now
        self._log: dict[tuple[str, str, str], deque[float]] = {}
        self._lock = threading.Lock()

    def check(self, action: str, principal: str, session: str | None = None) -> None:
        """Count one ``action`` by ``principal`` (in ``session``), or refuse it.

        Raises:
            RateLimited: ``rate_limited`` (HTTP 429) with ``retryAfterSeconds`` when the
                principal or the session already did the action as often as the window
                allows; nothing is counted then.
        """
        limit = self.limits.get(action)
        if limit is None:
            return
        keys: list[tuple[tuple[str, str, str], int]] = []
        if limit.per_principal is not None:
            keys.append(((action, "principal", principal), limit.per_principal))
        if limit.per_session is not None and session:
            keys.append(((action, "session", session), limit.per_session))
        if not keys:
            return
        now = self.now().timestamp()
        window = limit.window_seconds
        with self._lock:
            for key, most in keys:
                times = self._log.setdefault(key, deque())
                while times and now - times[0] >= window:
                    times.popleft()
                if len(times) >= most:
                    wait = max(1, math.ceil(times[0] + window - now))
                    _, scope, who = key
                    raise RateLimited(
                        f"{action} is limited to {most} per {window} s per {scope}; {scope} "
                        f"{who!r} reached it: retry in {wait} s",
                        retry_after=wait,
                        action=action,
                        limit=most,
                        windowSeconds=window,
                    )
            for key, most in keys:
                times = self._log[key]
                times.append(now)
                while len(times) > most:
                    times.popleft()
