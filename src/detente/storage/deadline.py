"""A deadline on a blocking database socket: when it passes, the socket is shut down.

A client blocked reading from a server that stopped answering (a stalled process, a
host that dropped off the network without a reset) waits for ever: TCP keepalives do not
help when the peer's kernel still acknowledges, and libpq has no per-query client
timeout. :class:`Watchdog` runs one background thread that shuts down the socket of any
call still running at its deadline; the blocked read then fails at once with the
driver's connection error, which the store reports as ``store_unavailable``.
"""

from __future__ import annotations

import heapq
import itertools
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Watchdog:
    """Shuts down the socket of a call that outlives its deadline (one thread for all)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._armed: dict[int, Callable[[], int]] = {}
        self._fired: set[int] = set()
        self._keys = itertools.count()
        self._thread: threading.Thread | None = None

    @contextmanager
    def guard(self, fileno: Callable[[], int], seconds: float) -> Iterator[Callable[[], bool]]:
        """Arm a deadline ``seconds`` from now on the socket ``fileno()`` returns.

        Yields:
            A function telling whether the deadline fired (the call then failed because
            of it, and the error should say the server did not answer in time).
        """
        key = next(self._keys)
        deadline = time.monotonic() + seconds
        with self._cond:
            # The thread sleeps until the earliest deadline in the heap (or for ever when
            # it is empty): it needs waking only when this one comes before that.
            wake = not self._heap or deadline < self._heap[0][0]
            heapq.heappush(self._heap, (deadline, key))
            self._armed[key] = fileno
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="detente-store-deadline", daemon=True
                )
                self._thread.start()
            if wake:
                self._cond.notify()
        try:
            yield lambda: key in self._fired
        finally:
            with self._cond:
                self._armed.pop(key, None)
                self._fired.discard(key)

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][1] not in self._armed:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                when, key = self._heap[0]
                delay = when - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                heapq.heappop(self._heap)
                fileno = self._armed.pop(key)
                self._fired.add(key)
                _shutdown(fileno)


def _shutdown(fileno: Callable[[], int]) -> None:
    """Shut the socket down for both directions (through a duplicate descriptor, so the
    owner's descriptor stays valid and is closed by its owner)."""
    try:
        sock = socket.socket(fileno=os.dup(fileno()))
    except (OSError, ValueError):  # already closed
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.close()
