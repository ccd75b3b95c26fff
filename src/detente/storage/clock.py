"""The store's clock as a :class:`~detente.clock.Clock`: one time for every server.

DESIGN principle 3: the server's clock is the authority on lease expiry, and in
multi-node mode that is the *store's* clock. Two detente servers whose machine clocks
disagree by a minute would otherwise disagree about which leases are live; reading
"now" from the store they share makes every expiry and renewal decision use one
timeline, whichever server takes it.
"""

from __future__ import annotations

import threading
from datetime import datetime

from detente.clock import Clock, SystemClock
from detente.storage.base import Store, TimedStore


class StoreClock:
    """``now()`` from a :class:`~detente.storage.base.TimedStore`, never going backwards.

    Args:
        store: a store with a ``now()`` (PostgreSQL: ``clock_timestamp()``; etcd: see
            :meth:`detente.storage.etcd.EtcdStore.now`).

    A reading earlier than one already returned (a store failover to a member whose clock
    is slightly behind) is raised to the latest one, so deadlines computed in one process
    never move backwards.
    """

    def __init__(self, store: TimedStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._last: datetime | None = None

    def now(self) -> datetime:
        """The store's time (timezone-aware UTC).

        Raises:
            StoreError: ``store_unavailable`` when the store cannot be reached: with no
                time there is no lease decision, so a partitioned server renews nothing
                and reaps nothing.
        """
        when = self._store.now()
        with self._lock:
            if self._last is not None and when < self._last:
                when = self._last
            self._last = when
        return when


def default_clock(store: Store) -> Clock:
    """The time authority for a service on ``store``: its clock if it has one, else the
    machine's (memory and SQLite stores live on one machine)."""
    return StoreClock(store) if isinstance(store, TimedStore) else SystemClock()
