"""The checks every claim decision starts with: it exists, its lease lives, its revision and
fencing token are current.

They raise the stable errors of :mod:`detente.errors`: ``not_found``, ``lease_expired``,
``revision_conflict`` (with the current claim and the id of the event that made it) and
``stale_fencing_token``.
"""

from __future__ import annotations

from datetime import datetime

from detente.clock import format_time
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.claims.record import claim_to_wire
from detente.domain.state import RepoState
from detente.domain.validation import check_revision, found
from detente.errors import (
    LeaseExpired,
    StaleFencingToken,
)


def get_claim(state: RepoState, claim_id: str) -> Claim:
    """The claim, or ``not_found``."""
    detail = f"no claim {claim_id!r} in repository {state.repo!r}"
    return found(state.claims.get(claim_id), detail, claimId=claim_id)


def check_claim_revision(claim: Claim, expected: int) -> None:
    """``revision_conflict`` (with the current claim) unless ``expected`` is current."""
    check_revision("claim", claim, expected, claim_to_wire)


def check_alive(claim: Claim, now: datetime) -> None:
    """``lease_expired`` when the claim's lease has run out (or it is already expired)."""
    if claim.status is ClaimStatus.EXPIRED or (claim.leased and now >= claim.lease.expires_at):
        raise LeaseExpired(
            f"the lease of claim {claim.id} expired at {format_time(claim.lease.expires_at)}; "
            "its authority is frozen (take it over to continue the work)",
            current=claim_to_wire(claim),
            expiredAt=format_time(claim.lease.expires_at),
        )


def check_fencing(state: RepoState, claim: Claim, token: int | None) -> None:
    """Refuse a write that presents an older fencing token than the current holder's.

    A claim that was taken over is fenced off entirely: its successor holds a newer token.

    Raises:
        StaleFencingToken: ``stale_fencing_token`` with ``expected`` (the current holder's
            token) and ``actual`` (the one presented).
    """
    if claim.successor_id is not None:
        successor = state.claims.get(claim.successor_id)
        current = successor.fencing_token if successor else claim.fencing_token + 1
        raise StaleFencingToken(
            f"claim {claim.id} was taken over by {claim.successor_id} (fencing token {current}); "
            f"writes with token {token if token is not None else claim.fencing_token} are refused",
            expected=current,
            actual=token if token is not None else claim.fencing_token,
            successorId=claim.successor_id,
        )
    if token is not None and token != claim.fencing_token:
        raise StaleFencingToken(
            f"claim {claim.id} holds fencing token {claim.fencing_token}, not {token}",
            expected=claim.fencing_token,
            actual=token,
        )
