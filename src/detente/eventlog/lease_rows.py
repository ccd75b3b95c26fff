"""Folding lease rows (a claim's current lease kept beside the log) into a projection.

A renewal on a store with lease rows appends no event (:mod:`detente.service.lease_rows`);
a projection folds the log's events, then the rows changed since the highest stamp it
has seen. The audit folds every row after its replay and reports a row older than what
the log says of its lease (:func:`stale_lease_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from detente.clock import parse_time
from detente.domain.claims.model import Lease
from detente.domain.state import RepoState
from detente.eventlog.records import LeaseRow

__all__ = ["fold_lease_rows", "stale_lease_rows"]


def fold_lease_rows(state: RepoState, rows: Iterable[LeaseRow]) -> None:
    """Fold lease rows read from the store: each moves its claim's lease when it extends
    the same lease to a higher revision than the state holds; every row raises the state's
    lease stamp."""
    for row in rows:
        lease = Lease(
            id=row.lease_id,
            revision=row.revision,
            ttl_seconds=row.ttl_seconds,
            expires_at=parse_time(row.expires_at),
        )
        state.claims.move_deadline(row.claim_id, lease, at=parse_time(row.at), stamp=row.stamp)


def stale_lease_rows(state: RepoState, rows: Sequence[LeaseRow]) -> list[str]:
    """The rows of ``rows`` older than the lease the log gave their claim (a checkpoint or
    a transition names a higher revision of the same lease): a row rolled back, or
    written by hand. ``claim/<id>: ...`` lines, by claim id."""
    out: list[str] = []
    for row in sorted(rows, key=lambda r: r.claim_id):
        claim = state.claims.get(row.claim_id)
        if claim is None:
            out.append(f"claim/{row.claim_id}: a lease row for a claim the log does not hold")
        elif claim.lease.id == row.lease_id and row.revision < claim.lease.revision:
            out.append(
                f"claim/{row.claim_id}: lease row at revision {row.revision} is older than "
                f"the log's revision {claim.lease.revision}"
            )
    return out
