"""Wake-ups for watchers: a publish after every commit, delivered to listeners.

A wake-up is only a hint (DESIGN principle 2): listeners re-read the log from their last
sequence, so a missed or duplicated wake-up never loses or repeats an event. Writers in
other processes (a CLI on the same SQLite file) do not publish here; watchers therefore
also re-read on a short timer. The same registry carries the stores' cross-server
wake-ups (PostgreSQL ``LISTEN``, the etcd head watch).
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
        """Announce that events up to ``seq`` are committed (0: unknown, re-read)."""
        with self._lock:
            listeners = list(self._listeners.values())
        for fn in listeners:
            fn(seq)
