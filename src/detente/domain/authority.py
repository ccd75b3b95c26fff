"""May this claim write these paths now? (the overlap rule at the resource).

A contested object may be mutated only by a live claim that covers it, with any
required meeting resolution already recorded (DESIGN principle 1). For each concrete
path :func:`check_write` requires:

1. the claim is live and ``active`` (``lease_expired``; ``overlap_blocking`` while it is
   negotiating or blocked; ``invalid_transition`` otherwise);
2. one of the claim's granted path patterns matches the path, else ``overlap_blocking``
   naming the claim that holds it, or ``out_of_scope`` when nobody does;
3. no other claim holds the path with authority (its granted targets: a claim still
   negotiating its opening, or a scope change's pending part, blocks nobody), unless a
   recorded resolution lets this claim write it: ``joint`` (both), ``serialize`` (the
   ``first``), a pending ``handoff`` (the sender). Advisory claims never block. Anything
   else is ``overlap_blocking``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from detente.domain.claims.guards import check_alive, check_fencing, get_claim
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.overlap.globs import matches
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.state import RepoState
from detente.errors import InvalidTransition, OutOfScope, OverlapBlocking


def _authoritative(other: Claim, pattern: str) -> bool:
    """Does ``other``'s ``pattern`` carry authority? Only granted targets of a holding claim
    do: a claim negotiating its opening, or the pending part of a scope change, waits."""
    return other.holding and other.granted and pattern not in other.pending_paths


def _may_share(state: RepoState, claim: Claim, other: Claim) -> bool:
    if other.advisory:
        return True
    resolution = state.meetings.resolved_pairs.get(frozenset({claim.id, other.id}))
    if resolution is None:
        return False
    kind = resolution["type"]
    if kind == "joint":
        return True
    if kind == "serialize":
        return bool(resolution["first"] == claim.id)
    if kind == "handoff" and not resolution.get("accepted"):
        return bool(resolution["fromClaimId"] == claim.id)
    return False


def check_write(
    state: RepoState,
    claim_id: str,
    paths: Sequence[str],
    now: datetime,
    fencing_token: int | None = None,
) -> list[str]:
    """Authorize ``claim_id`` to write ``paths`` (concrete repo-relative file paths).

    Returns:
        The normalised paths, all authorized.

    Raises:
        NotFoundError, StaleFencingToken (taken over, or an older token), LeaseExpired,
        InvalidTransition, OverlapBlocking (``blockers`` lists
        ``{path, claimId, agent}``), OutOfScope (``paths`` lists them), ValidationError.
    """
    claim = get_claim(state, claim_id)
    check_fencing(state, claim, fencing_token)
    check_alive(claim, now)
    if claim.status in (ClaimStatus.NEGOTIATING, ClaimStatus.BLOCKED):
        raise OverlapBlocking(
            f"claim {claim.id} is {claim.status.value}: its writes wait for the meeting's "
            f"resolution ({', '.join(claim.meeting_ids) or 'no meeting'})",
            claimId=claim.id,
            meetingIds=list(claim.meeting_ids),
        )
    if claim.status is not ClaimStatus.ACTIVE:
        raise InvalidTransition(
            claim.status.value,
            "write",
            f"claim {claim.id} is {claim.status.value}: it cannot write",
        )
    normalised = [
        normalize_pattern(p, case_insensitive=state.case_insensitive, field=f"paths[{i}]")
        for i, p in enumerate(paths)
    ]
    blockers: list[dict[str, str]] = []
    outside: list[str] = []
    for path in normalised:
        others = [
            state.claims[key]
            for key, theirs, _ in state.claims.path_index.overlapping(path, exclude=claim.id)
            if _authoritative(state.claims[key], theirs)
        ]
        refusing = [o for o in others if not _may_share(state, claim, o)]
        for other in refusing:
            blockers.append({"path": path, "claimId": other.id, "agent": other.agent.name})
        if not any(matches(pattern, path) for pattern in claim.paths) and not refusing:
            outside.append(path)
    if blockers:
        names = "; ".join(f"{b['path']} is held by {b['claimId']} ({b['agent']})" for b in blockers)
        raise OverlapBlocking(f"refused: {names}", claimId=claim.id, blockers=blockers)
    if outside:
        raise OutOfScope(
            f"outside claim {claim.id}'s targets: {', '.join(outside)} "
            "(add them with a scope change)",
            claimId=claim.id,
            paths=outside,
        )
    return normalised
