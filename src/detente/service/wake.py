"""A waiting thread's wake-up, as cheap as one lock: what a group-committed command's
thread sleeps on until its batch answered it (:mod:`detente.service.group_commit`).

:class:`threading.Event` builds a condition and a re-entrant lock per event and, on every
``wait``, a further lock and a waiter list entry; a renewal's thread waits once per
heartbeat, so that bookkeeping was a visible share of a renewal's CPU at 16 clients. A
wake-up here is a single :class:`threading.Lock` taken when made: ``set`` releases it
(any thread may), ``wait`` takes it. The one waiter is the thread that made it.
"""

from __future__ import annotations

import contextlib
import threading

__all__ = ["Wake"]


class Wake:
    """Wakes its one waiting thread; set it from any thread, any number of times."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()

    def set(self) -> None:
        """Let :meth:`wait` return (now or when called). A second ``set`` is a no-op."""
        with contextlib.suppress(RuntimeError):  # already set and not waited on yet
            self._lock.release()

    def wait(self) -> None:
        """Block until :meth:`set` was called (once per wake-up: the waiter is one thread
        that waits once)."""
        self._lock.acquire()
