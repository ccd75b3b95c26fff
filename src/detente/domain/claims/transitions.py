"""The claim state machine, as one table.

Every status change in :mod:`detente.domain.claims.decide` goes through :func:`require`; a
forbidden move raises ``invalid_transition`` naming from and to. The table::

    draft            -> announced, abandoned
    announced        -> active, negotiating, blocked, abandoned, expired
    negotiating      -> active, blocked, suspended, abandoned, expired
    active           -> negotiating, suspended, blocked, ready_for_review, abandoned, expired
    blocked          -> active, negotiating, suspended, abandoned, expired
    suspended        -> active, negotiating, blocked, abandoned, expired
    ready_for_review -> active, integrated, abandoned, expired
    integrated       -> completed
    expired          -> abandoned, taken_over
    abandoned        -> taken_over
    completed, taken_over: terminal

``blocked`` waits for a human (an arbitrator, or a takeover's approvers); ``suspended``
waits for a serialized predecessor (or its holder's resume). ``ready_for_review ->
active`` is the stale-base return: the integration CAS lost and the evidence must be
re-collected. An expired claim never becomes live again (a renewal never resurrects it);
its successor takes it over.
"""

from __future__ import annotations

from detente.domain.claims.model import ClaimStatus as S
from detente.errors import InvalidTransition

TRANSITIONS: dict[S, frozenset[S]] = {
    S.DRAFT: frozenset({S.ANNOUNCED, S.ABANDONED}),
    S.ANNOUNCED: frozenset({S.ACTIVE, S.NEGOTIATING, S.BLOCKED, S.ABANDONED, S.EXPIRED}),
    S.NEGOTIATING: frozenset({S.ACTIVE, S.BLOCKED, S.SUSPENDED, S.ABANDONED, S.EXPIRED}),
    S.ACTIVE: frozenset(
        {S.NEGOTIATING, S.SUSPENDED, S.BLOCKED, S.READY_FOR_REVIEW, S.ABANDONED, S.EXPIRED}
    ),
    S.BLOCKED: frozenset({S.ACTIVE, S.NEGOTIATING, S.SUSPENDED, S.ABANDONED, S.EXPIRED}),
    S.SUSPENDED: frozenset({S.ACTIVE, S.NEGOTIATING, S.BLOCKED, S.ABANDONED, S.EXPIRED}),
    S.READY_FOR_REVIEW: frozenset({S.ACTIVE, S.INTEGRATED, S.ABANDONED, S.EXPIRED}),
    S.INTEGRATED: frozenset({S.COMPLETED}),
    S.EXPIRED: frozenset({S.ABANDONED, S.TAKEN_OVER}),
    S.ABANDONED: frozenset({S.TAKEN_OVER}),
    S.COMPLETED: frozenset(),
    S.TAKEN_OVER: frozenset(),
}

TERMINAL = frozenset(s for s, targets in TRANSITIONS.items() if not targets)


def allowed(from_status: S, to_status: S) -> bool:
    """True when the table allows ``from_status -> to_status``."""
    return to_status in TRANSITIONS[from_status]


def require(from_status: S, to_status: S, *, claim_id: str | None = None) -> None:
    """Guard a status change.

    Raises:
        InvalidTransition: ``invalid_transition``, naming ``from`` and ``to``.
    """
    if not allowed(from_status, to_status):
        who = f"claim {claim_id} " if claim_id else "a claim "
        raise InvalidTransition(
            from_status.value,
            to_status.value,
            f"{who}in status {from_status.value!r} cannot move to {to_status.value!r}",
            claimId=claim_id,
        )
