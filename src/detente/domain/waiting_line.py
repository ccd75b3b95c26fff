"""First come, first granted: a waiter's place in line (pure).

When a holder lets go of a target several claims wait for, the waiters that contested
it would otherwise block one another for ever (each is still negotiating, none holds
the target). :func:`queued_behind` says which of two waiters goes first and
:func:`arrival` when each asked; :mod:`detente.domain.settle` grants the earliest.
"""

from __future__ import annotations

from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.overlap.model import Overlap
from detente.domain.state import RepoState

__all__ = ["arrival", "goes_before", "queued_behind"]


def queued_behind(state: RepoState, claim: Claim, overlap: Overlap) -> bool:
    """Is the other claim of ``overlap`` a later waiter that ``claim`` goes before?

    First come, first granted: when a holder lets go, the waiters that contested it
    would otherwise block one another for ever (each is still negotiating, none holds
    the target). A negotiating claim that waits for the contested targets (it was never
    granted, or they are among its ``pendingPaths``) does not block a waiter that asked
    for them before it did (:func:`arrival`: when each asked, not when each opened), so
    the earliest asker is granted and the others go on negotiating with it in their
    room.
    """
    other = state.claims.get(overlap.claim_id)
    return (
        other is not None
        and claim.status is ClaimStatus.NEGOTIATING
        and other.status is ClaimStatus.NEGOTIATING
        and goes_before(state, claim, overlap)
    )


def goes_before(state: RepoState, claim: Claim, overlap: Overlap) -> bool:
    """Does ``claim`` go before the other claim of ``overlap`` in the line for what they
    share, whatever either one's status: the other waits for its side (never granted,
    or it is among its ``pendingPaths``) and asked after ``claim`` did (:func:`arrival`)?

    What a resolution assigns ``claim`` is granted past such a waiter
    (:func:`detente.domain.meetings.resolution_events.activation_events`): it never
    held the target, and it would be granted after ``claim`` anyway.
    """
    other = state.claims.get(overlap.claim_id)
    return (
        other is not None
        and _waits_for(other, overlap)
        and arrival(state, other) > arrival(state, claim)
    )


def _waits_for(other: Claim, overlap: Overlap) -> bool:
    """Does ``other`` wait for its side of ``overlap`` (rather than hold it)?"""
    if not other.granted:
        return True
    pending = set(other.pending_paths)
    return bool(pending) and all(t.theirs in pending for t in overlap.targets)


def arrival(state: RepoState, claim: Claim) -> tuple[int, int, int]:
    """A waiter's place in line: when it asked for what it waits for.

    A granted claim waiting for targets a scope change parked asked when that change
    was recorded (:attr:`~detente.domain.claims.model.Claim.asked`: after every claim
    opened by then, in ask order); any other claim asked when it opened (its fencing
    token, handed out in opening order), a takeover successor when its predecessor did
    (the chain followed to the first claim, bounded). Its own token breaks a tie.
    """
    if claim.granted and claim.pending_paths and claim.asked is not None:
        return (claim.asked[0], 1, claim.asked[1])
    first = claim
    for _ in range(64):
        of = (first.takeover or {}).get("claimId")
        pred = state.claims.get(str(of)) if of is not None else None
        if pred is None:
            break
        first = pred
    return (first.fencing_token, 0, claim.fencing_token)
