"""What a PostgreSQL store remembers between its transactions, to start one without a read.

A transaction needs two things before it decides anything: the log head (to chain and
number its events, and to know whether the service's projection is current) and the
database clock (the lease-time authority, :mod:`detente.storage.clock`). Reading them
under the lock costs a round trip of its own (:data:`~detente.storage.postgres_tx.
BEGIN_LOCKED`). A store that committed last already knows both:

- the head its own last commit left (:class:`~detente.storage.etcd_head.HeadMemory`,
  the same rules as on etcd: a lost race makes the next transactions read it, an
  unknown outcome forgets it). The commit checks it under the lock, so a wrong guess
  costs a retry, never a wrong write;
- the database clock as of its last reading, carried forward by this machine's
  monotonic clock. Readings come back with every commit (the commit function answers
  ``clock_timestamp()``) and every locked start; one older than :data:`CLOCK_FRESH`
  seconds is not used, so the next transaction reads the clock (and the head) under the
  lock. The estimate is late by half a round trip plus the drift of two clocks over at
  most :data:`CLOCK_FRESH` seconds (microseconds), far inside the step tolerance of the
  slewed lease clock; a step of the database clock is seen within that time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from detente.storage.etcd_head import Head, HeadMemory

__all__ = ["CLOCK_FRESH", "PgMemory", "Start"]

#: Seconds a reading of the database clock may be carried forward by the monotonic clock.
CLOCK_FRESH = 2.0


@dataclass(frozen=True)
class Start:
    """Where a transaction started from memory begins.

    Attributes:
        head: the head this store's last commit left (``at``: its last event's time).
        now: the database clock, carried forward from its last reading (UTC).
    """

    head: Head
    now: datetime


class PgMemory:
    """The remembered head and clock reading of one :class:`~detente.storage.postgres.
    PostgresStore` (thread-safe).

    Args:
        monotonic: the clock readings are carried forward by (seconds).
        fresh: seconds a reading stays usable.
    """

    def __init__(
        self, monotonic: Callable[[], float] = time.monotonic, fresh: float = CLOCK_FRESH
    ) -> None:
        self.heads = HeadMemory()
        self._monotonic = monotonic
        self._fresh = fresh
        self._lock = threading.Lock()
        self._reading: tuple[float, datetime] | None = None
        self._highest = (0, 0)
        #: The highest sequence another server's commit was announced with (``NOTIFY``).
        self._heard = 0
        #: Starts from memory declined because a newer commit was heard (for tests and
        #: benchmarks).
        self.declined = 0
        #: Another writer shares the database (seen: a lost race, or its lease rows below
        #: this store's own); from then on a batch that appends events starts locked.
        self.contended = False

    def keep(self, head: Head) -> None:
        """Remember ``head`` as the one this store's last transaction left, unless a later
        one is known (transactions of two repositories end in any order)."""
        with self._lock:
            if (head.seq, head.lease_stamp) < self._highest:
                return
            self._highest = (head.seq, head.lease_stamp)
        self.heads.keep(head)

    def heard(self, seq: int) -> None:
        """A commit up to ``seq`` was announced (any server's, this one's too; 0, after a
        reconnect, says nothing). Called on the store's listener thread."""
        with self._lock:
            self._heard = max(self._heard, seq)

    def saw_clock(self, now: datetime) -> None:
        """Keep ``now``, just read from the database, as the latest clock reading."""
        with self._lock:
            self._reading = (self._monotonic(), now)

    def clock(self) -> datetime | None:
        """The database clock carried forward from the last reading, or None when there
        is none younger than ``fresh`` seconds."""
        with self._lock:
            reading = self._reading
        if reading is None:
            return None
        elapsed = self._monotonic() - reading[0]
        if not 0.0 <= elapsed <= self._fresh:
            return None
        return reading[1] + timedelta(seconds=elapsed)

    def take(self, *, appends: bool = False) -> Start | None:
        """Where the next transaction starts from memory, or None: it reads under the lock
        (no head remembered, cooling down after a lost race, no fresh clock reading, or a
        commit after the remembered head was heard: :meth:`heard`), or when the batch
        ``appends`` events while another writer is known (:attr:`contended`): decided from
        memory, it would nearly always lose to the other writer's heartbeats.
        Takes the head either way (see :meth:`HeadMemory.take`)."""
        now = self.clock()
        if now is None:
            self.heads.forget()
            return None
        if appends and self.contended:
            self.heads.forget()
            return None
        head = self.heads.take()
        if head is None:
            return None
        with self._lock:
            behind = self._heard > head.seq
            self.declined += behind
        # Another server appended since: a start from memory would decide on a stale log
        # and lose its compare (the projection then restarts from its snapshot).
        return None if behind else Start(head, now)
