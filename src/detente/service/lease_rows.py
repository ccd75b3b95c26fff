"""Renewals that cost what they change: a lease moved by row, not by a chained event.

On a store with lease rows (:class:`~detente.storage.base.LeaseStore`: memory, SQLite,
PostgreSQL, etcd) a
``lease.renewed`` decision is not appended to the log. Inside the same transaction the
group commit uses, the claim's lease row is moved by compare-and-swap (the store refuses
a row whose revision is not above the one it holds), the projection folds the new lease
(:meth:`~detente.domain.claims.evolve.ClaimBook.move_deadline`) and the claim's record
row is rewritten. The log keeps the lease *transitions* (granted, expired, taken over,
released) and a ``lease.checkpoint`` event per repository at most every
``Policy.lease_checkpoint_seconds`` naming each lease moved since the last one
(:func:`~detente.domain.claims.decide.decide_lease_checkpoint`, decided with the
timeouts). Every reader folds the rows changed since the highest stamp it has seen after
the log's events, so a restart, another process on the same store and the audit reach
the exact deadlines.

A store without lease rows appends every renewal as a ``lease.renewed`` event.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from detente.clock import format_time
from detente.domain.events import LEASE_RENEWED, Event
from detente.domain.state import RepoState
from detente.eventlog.lease_rows import fold_lease_rows
from detente.eventlog.projections import rows_for
from detente.storage.base import LeaseRow, LeaseStore, Store, StoreTx, is_lease_tx

__all__ = ["fold_lease_rows", "keeps_lease_rows", "move_leases"]


def keeps_lease_rows(store: Store) -> bool:
    """True when renewals on ``store`` move lease rows instead of appending events."""
    return isinstance(store, LeaseStore)


def move_leases(
    tx: StoreTx, state: RepoState, events: Sequence[Event], at: datetime
) -> list[Event]:
    """Write the ``lease.renewed`` decisions among ``events`` as lease rows in ``tx``,
    fold them and upsert their claims' record rows; return the other events (to append).

    Raises:
        ConcurrencyError: ``store_concurrency`` when a lease row moved meanwhile.
    """
    renewals = [e for e in events if e.type == LEASE_RENEWED]
    if not renewals or not is_lease_tx(tx):
        return list(events)
    when = format_time(at)
    written = tx.write_leases(
        [
            LeaseRow(
                claim_id=str(e.data["claimId"]),
                repo=state.repo,
                lease_id=str(e.data["leaseId"]),
                revision=int(e.data["leaseRevision"]),
                ttl_seconds=int(e.data["ttlSeconds"]),
                expires_at=str(e.data["expiresAt"]),
                at=when,
            )
            for e in renewals
        ]
    )
    fold_lease_rows(state, written)
    tx.upsert_records(rows_for(state, (e.subject for e in renewals)))
    return [e for e in events if e.type != LEASE_RENEWED]
