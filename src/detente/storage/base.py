"""The storage protocol every backend implements (memory, SQLite, PostgreSQL, etcd).

A backend stores two things:

- the **event log**: append-only, one global sequence assigned in commit order, each
  event hash-chained to the previous one, and a per-stream revision that is unique with
  its subject (the storage constraint is what guarantees CAS; the domain check exists for
  good messages);
- the **projection rows**: the current record of every claim and meeting as JSON,
  written in the same transaction as the events that produced them.

Commands on one repository are serialized by :meth:`Store.transaction`, which is what
makes overlap analysis atomic with the claim write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol, TypeGuard, runtime_checkable

from detente.eventlog.envelope import NewEvent, StoredEvent
from detente.eventlog.records import LeaseRow, RecordRow
from detente.eventlog.snapshots import Snapshot

__all__ = [
    "EXPIRY_BATCH",
    "BoundedStore",
    "LeaseRow",
    "LeaseStore",
    "LeaseStoreTx",
    "LeaseTx",
    "NewEvent",
    "NotifyingStore",
    "PagedReads",
    "RecordRow",
    "RetainingStore",
    "SnapshotStore",
    "Store",
    "StoreTx",
    "TimedStore",
    "expiry_batch",
    "is_lease_tx",
]


class StoreTx(Protocol):
    """One serialized unit of work on a repository."""

    def read_after(self, seq: int, repo: str) -> list[StoredEvent]:
        """Events of ``repo`` with sequence > ``seq``, in order (to catch a cache up)."""
        ...

    def append(self, events: Sequence[NewEvent], expected: Mapping[str, int]) -> list[StoredEvent]:
        """Append ``events`` atomically.

        Args:
            events: in order; may touch several subjects.
            expected: for every subject touched, its current stream revision (0 = new).

        Raises:
            ConcurrencyError: a subject's revision is not the expected one.
        """
        ...

    def upsert_records(self, rows: Sequence[RecordRow]) -> None:
        """Replace the projection rows (same transaction as the append)."""
        ...


class Store(Protocol):
    """A storage backend, chosen by URL (see :mod:`detente.storage.factory`)."""

    url: str

    def transaction(self, repo: str) -> AbstractContextManager[StoreTx]:
        """Exclusive unit of work on ``repo``; commits on normal exit, rolls back on error."""
        ...

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]:
        """Events with sequence > ``since`` (optionally of one repo), at most ``limit``."""
        ...

    def iter_all(self, *, batch: int = 1000) -> Iterator[StoredEvent]:
        """Every event in sequence order (for audit and rebuilds)."""
        ...

    def head(self) -> tuple[int, str]:
        """``(last sequence, its hash)``; ``(0, GENESIS_HASH)`` when empty."""
        ...

    def records(self, kind: str, repo: str | None = None) -> list[RecordRow]:
        """Projection rows of ``kind`` (``claim``, ``meeting``)."""
        ...

    def close(self) -> None: ...


class PagedReads:
    """``iter_all`` for a store whose ``read`` pages by sequence (SQL stores, etcd)."""

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]:
        raise NotImplementedError

    def iter_all(self, *, batch: int = 1000) -> Iterator[StoredEvent]:
        """Every event in sequence order, read ``batch`` at a time."""
        since = 0
        while chunk := self.read(since=since, limit=batch):
            yield from chunk
            since = chunk[-1].seq


# Optional capabilities: a backend implements them when it can; callers check with
# ``isinstance(store, TimedStore)`` (the protocols are runtime-checkable).


@runtime_checkable
class TimedStore(Protocol):
    """A store with a clock shared by every server on it (the lease-time authority)."""

    def now(self) -> datetime:
        """The store's current time, timezone-aware UTC.

        Raises:
            StoreError: ``store_unavailable`` when the store cannot be reached.
        """
        ...


@runtime_checkable
class LeaseStore(Protocol):
    """A store that keeps each claim's current lease in a row moved by compare-and-swap,
    so a renewal that only moves a deadline appends no event (its transactions are
    :class:`LeaseTx`). On a store without it every renewal is a ``lease.renewed`` event."""

    def leases_after(self, stamp: int, repo: str) -> list[LeaseRow]:
        """The lease rows of ``repo`` with a stamp above ``stamp``, by stamp.

        Raises:
            StoreError: ``store_unavailable`` when the store cannot be reached.
        """
        ...


@runtime_checkable
class LeaseTx(Protocol):
    """The transaction of a :class:`LeaseStore`: lease rows written with the events."""

    def leases_after(self, stamp: int, repo: str) -> list[LeaseRow]:
        """As :meth:`LeaseStore.leases_after`, inside the transaction."""
        ...

    def write_leases(self, rows: Sequence[LeaseRow]) -> list[LeaseRow]:
        """Move the claims' lease rows (committed with the transaction).

        Each row must extend its claim's stored lease: the store holds no row of the claim,
        or one whose revision is below the row's (the first of this transaction's rows for
        the claim; later ones follow it). Rows get the next stamps of the store.

        Returns:
            The rows as stored (``stamp`` set), in order.

        Raises:
            ConcurrencyError: ``store_concurrency`` when a stored row is already at or above
                the revision (another writer renewed first), at once or at commit.
        """
        ...


#: ``type -> whether its instances are LeaseTx`` (:func:`is_lease_tx`).
_LEASE_TX_TYPES: dict[type, bool] = {}


class LeaseStoreTx(StoreTx, LeaseTx, Protocol):
    """A store transaction that also writes lease rows (what :func:`is_lease_tx` proves)."""


def is_lease_tx(tx: StoreTx) -> TypeGuard[LeaseStoreTx]:
    """``isinstance(tx, LeaseTx)``, decided once per transaction class: a runtime
    protocol check inspects every member on each call (a thirtieth of a renewal's CPU,
    asked once per command). Transactions define their methods on the class."""
    kind = type(tx)
    known = _LEASE_TX_TYPES.get(kind)
    if known is None:
        known = _LEASE_TX_TYPES[kind] = isinstance(tx, LeaseTx)
    return known


@runtime_checkable
class OptimisticStore(Protocol):
    """A store whose transactions may start from what its own last commit left, without
    the write lock, and be refused at commit when another writer moved the log (PostgreSQL
    from memory: :mod:`detente.storage.postgres_memory`)."""

    def transaction_for(self, repo: str, *, appends: bool) -> AbstractContextManager[StoreTx]:
        """:meth:`Store.transaction`, told whether its batch holds a command that appends
        events (``appends``) rather than renewals alone: while other writers are active
        such a transaction starts under the write lock, since deciding it from memory
        would lose to their heartbeats and cost its projection."""
        ...


@runtime_checkable
class NotifyingStore(Protocol):
    """A store that wakes watchers on every server when anyone commits."""

    def listen(self, fn: Callable[[int], None]) -> Callable[[], None]:
        """Call ``fn(seq)`` (a hint: "the log may now reach ``seq``"; 0 = unknown) after
        commits by any process; returns the function that unsubscribes. ``fn`` runs on a
        background thread and must not block."""
        ...


@runtime_checkable
class RetainingStore(Protocol):
    """A store that no longer serves the oldest part of its log (retention, archiving)."""

    def first_seq(self) -> int:
        """The lowest sequence still readable (1 when nothing was trimmed)."""
        ...


@runtime_checkable
class BoundedStore(Protocol):
    """A store that refuses a transaction larger than a limit (etcd: ``--max-txn-ops``)."""

    #: The most events one transaction may append (each with its own stream and row).
    max_events_per_transaction: int


@runtime_checkable
class SnapshotStore(Protocol):
    """A store that keeps one projection snapshot per repository
    (:mod:`detente.eventlog.snapshots`: a cache the service verifies before trusting)."""

    def load_snapshot(self, repo: str) -> Snapshot | None:
        """The newest snapshot of ``repo``, if any.

        Raises:
            StoreError: ``store_unavailable`` when the store cannot be reached.
        """
        ...

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """Keep ``snapshot`` unless the store already holds one of its repository at the
        same or a later event *of the same version* (a separate small write: never inside
        a command's transaction). A snapshot of another version (another release's fold)
        is always replaced: no process of this release can use it, and keeping it would
        make every process replay the whole log until the next event.

        Raises:
            StoreError: ``store_unavailable`` when the store cannot be reached.
        """
        ...


#: Leases expired in one transaction on a store without a limit of its own.
EXPIRY_BATCH = 256


def expiry_batch(store: Store) -> int:
    """How many leases one transaction on ``store`` may expire: a quarter of a bounded
    store's event limit (room for the reactions an expiry triggers), else
    :data:`EXPIRY_BATCH`."""
    if isinstance(store, BoundedStore):
        return max(1, store.max_events_per_transaction // 4)
    return EXPIRY_BATCH
