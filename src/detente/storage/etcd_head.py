"""The log head an etcd transaction starts from: read from the cluster, or remembered.

Every etcd transaction compares ``mod_revision(/P/head)`` with the head it started from
(:mod:`detente.storage.etcd`), so the head it starts from is a *guess* the commit
checks, not a fact it relies on. Reading it costs a ``Range`` round trip per
transaction; a server that wrote the head itself last already knows it: the head its
own last commit left, at the revision etcd answered for that commit. Starting from that
memory makes a command one ``Txn``, like a raw compare-and-swap. If another server
committed meanwhile, the compare fails, the transaction is a
:class:`~detente.errors.ConcurrencyError` and the caller retries on fresh state, as for
any lost race.

Two rules keep the guess from costing more than it saves or from deciding on stale
state:

- after a lost race the memory is not used for :data:`COOLDOWN` transactions (another
  server is writing: each of them reads the head, as before);
- a transaction that started from memory and writes nothing has its decisions (refusals,
  answers) checked by one read of the head before it ends (:meth:`EtcdStore.transaction
  <detente.storage.etcd.EtcdStore.transaction>`): a refusal is never based on a log
  another server has moved.

The technique is the usual optimistic one of compare-and-swap clients (e.g. etcd's own
``clientv3/concurrency`` STM retries on a failed compare rather than locking).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["COOLDOWN", "Head", "HeadMemory"]

#: Transactions that read the head after a lost race before memory is trusted again.
COOLDOWN = 16


@dataclass(frozen=True)
class Head:
    """The log head a transaction starts from.

    Attributes:
        seq / hash: the last event's sequence and hash (0 and the genesis hash: empty).
        mod_revision: the ``mod_revision`` of ``/P/head`` (the commit's compare target).
        revision: the store revision reads of this transaction are made at (0: the
            latest, for a remembered head: a read that sees another server's writes
            belongs to a transaction whose compare fails anyway).
        remembered: True when taken from this store's own last commit, not read.
        at: the last event's ``at`` (the floor of lease time; etcd keeps its own floor
            too).
        lease_stamp: the highest lease-row stamp (a renewal moves a lease row and no
            event; PostgreSQL's commit compares this too, etcd keeps it in ``/P/head``).
    """

    seq: int
    hash: str
    mod_revision: int
    revision: int
    remembered: bool = False
    at: str | None = None
    lease_stamp: int = 0


class HeadMemory:
    """The head this store's last transaction left, and when to trust it.

    Args:
        cooldown: transactions that read the head after a lost race.
    """

    def __init__(self, cooldown: int = COOLDOWN) -> None:
        self._cooldown = cooldown
        self._lock = threading.Lock()
        self._head: Head | None = None
        self._reads_left = 0
        #: Transactions started from memory and lost races (for tests and benchmarks).
        self.hits = 0
        self.misses = 0

    def take(self) -> Head | None:
        """The remembered head (marked ``remembered``), or None: read it from the cluster
        (nothing remembered, or cooling down after a lost race). Forgets it either way."""
        with self._lock:
            head, self._head = self._head, None
            if self._reads_left > 0:
                self._reads_left -= 1
                return None
            if head is None:
                return None
            self.hits += 1
            return Head(
                head.seq,
                head.hash,
                head.mod_revision,
                0,
                remembered=True,
                at=head.at,
                lease_stamp=head.lease_stamp,
            )

    def keep(self, head: Head) -> None:
        """Remember ``head`` as the log's head after this store's last transaction."""
        with self._lock:
            self._head = head

    def lost(self) -> None:
        """A transaction lost a race: forget, and read the head for the next
        :data:`COOLDOWN` transactions."""
        with self._lock:
            self._head = None
            self._reads_left = self._cooldown
            self.misses += 1

    def forget(self) -> None:
        """The outcome of a transaction is unknown (an error): read the head next time."""
        with self._lock:
            self._head = None
