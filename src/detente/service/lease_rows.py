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
from detente.domain.claims.model import Claim
from detente.domain.claims.record import lease_to_wire
from detente.domain.events import LEASE_RENEWED, Event
from detente.domain.state import RepoState
from detente.errors import ConcurrencyError
from detente.eventlog.lease_rows import fold_lease_rows
from detente.eventlog.projections import KINDS, rows_for
from detente.storage.base import LeaseRow, LeaseStore, RecordRow, Store, StoreTx, is_lease_tx

__all__ = [
    "RenewedRows",
    "fold_lease_rows",
    "keep_unseen_leases",
    "keeps_lease_rows",
    "move_leases",
    "refuse_on_full_view",
]


def keeps_lease_rows(store: Store) -> bool:
    """True when renewals on ``store`` move lease rows instead of appending events."""
    return isinstance(store, LeaseStore)


#: A claim's record row built from scratch (the projections' own builder).
_CLAIM_ROW = KINDS["claim"][1]


class RenewedRows:
    """The claim record row each renewed claim was last written with, so that the next
    renewal of an otherwise unchanged claim rewrites only the row's ``lease`` member
    instead of the whole record (``claim_to_wire`` spelled 36 fields per heartbeat).

    An entry pairs a claim object with the row built from it; it is used only when the
    claim about to be renewed *is* that object (records are frozen: any other change of
    the claim made a new one), so a reused row is always the claim's own. Bounded: the
    memory is dropped when it holds ``limit`` claims.

    Args:
        limit: claims remembered at most.
    """

    def __init__(self, limit: int = 10_000) -> None:
        self._limit = limit
        self._rows: dict[str, tuple[Claim, RecordRow]] = {}

    def row(self, before: Claim | None, after: Claim) -> RecordRow:
        """The record row of ``after``, the claim ``before`` was until its lease moved (a
        claim whose lease did not move is both)."""
        kept = self._rows.get(after.id)
        if kept is not None and kept[0] is after:
            return kept[1]
        if kept is not None and kept[0] is before:
            body = {**kept[1].body, "lease": lease_to_wire(after.lease)}
            row = RecordRow("claim", after.id, after.repo, after.revision, after.status.value, body)
        else:
            row = _CLAIM_ROW(after)
        if len(self._rows) >= self._limit:
            self._rows.clear()
        self._rows[after.id] = (after, row)
        return row


def move_leases(
    tx: StoreTx,
    state: RepoState,
    events: Sequence[Event],
    at: datetime,
    rows: RenewedRows | None = None,
) -> list[Event]:
    """Write the ``lease.renewed`` decisions among ``events`` as lease rows in ``tx``,
    fold them and upsert their claims' record rows (``rows``: the rows last written, to
    rewrite only their lease); return the other events (to append).

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
    if rows is None:
        fold_lease_rows(state, written)
        tx.upsert_records(rows_for(state, (e.subject for e in renewals)))
    else:
        ids = list(dict.fromkeys(str(e.data["claimId"]) for e in renewals))
        before = {claim_id: state.claims.get(claim_id) for claim_id in ids}
        fold_lease_rows(state, written)
        tx.upsert_records([rows.row(before[i], state.claims[i]) for i in ids if i in state.claims])
    return [e for e in events if e.type != LEASE_RENEWED]


def keep_unseen_leases(tx: StoreTx, state: RepoState, seen: int) -> None:
    """After ``tx`` committed: when the store reports lease rows of other writers below
    the ones it wrote (``tx.unseen_leases``: a renewal from memory on PostgreSQL,
    :mod:`detente.storage.postgres_renew`), lower the projection's lease stamp back to
    ``seen`` (what it had folded when the transaction began), so its next catch-up reads
    those rows; its own rows are read again and change nothing."""
    if getattr(tx, "unseen_leases", False) is True:
        state.claims.lease_stamp = seen


def refuse_on_full_view(tx: StoreTx, refusal: Exception) -> None:
    """A command was refused in ``tx``: when the transaction did not read other writers'
    lease rows (``tx.follows_leases`` False: a batch of renewals from memory on
    PostgreSQL), the refusal may rest on a lease another server moved (a client renewing
    through this server what it last renewed through another), so the batch runs again
    on a view with every row: raise ``store_concurrency`` (a start from memory: the retry
    reads the heads under the lock and does not count as a lost race).

    Raises:
        ConcurrencyError: as said; nothing else happens.
    """
    if getattr(tx, "follows_leases", True) is False:
        race = ConcurrencyError("a refusal decided without other servers' lease rows")
        race.remembered = True
        raise race from refusal
