"""Wake-ups for watchers: a publish after every commit, delivered to listeners.

A wake-up is only a hint (DESIGN principle 2): listeners re-read the log from their last
sequence, so a missed or duplicated wake-up never loses or repeats an event. Writers in
other processes (a CLI on the same SQLite file) do not publish here; watchers therefore
also re-read on a short timer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

Listener = Callable[[int], None]


class Broadcaster:
    """Thread-safe fan-out of "the log now reaches sequence N"."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[int, Listener] = {}
        self._next = 0
        self._cond = threading.Condition()
        self.head = 0

    def listen(self, fn: Listener) -> Callable[[], None]:
        """Register ``fn``; returns a function that unregisters it. ``fn`` must not block."""
        with self._lock:
            key = self._next
            self._next += 1
            self._listeners[key] = fn

        def unlisten() -> None:
            with self._lock:
                self._listeners.pop(key, None)

        return unlisten

    def publish(self, seq: int) -> None:
        """Announce that events up to ``seq`` are committed."""
        with self._cond:
            self.head = max(self.head, seq)
            self._cond.notify_all()
        with self._lock:
            listeners = list(self._listeners.values())
        for fn in listeners:
            fn(seq)

    def wait_beyond(self, seq: int, timeout: float) -> bool:
        """Block until a publish beyond ``seq`` or ``timeout`` seconds; True if one came."""
        with self._cond:
            return self._cond.wait_for(lambda: self.head > seq, timeout=timeout)
