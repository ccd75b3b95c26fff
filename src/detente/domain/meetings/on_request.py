"""A meeting opened on request, over a ``potential`` overlap.

Two globs that meet only in paths that exist at neither base commit (severity
``potential``) leave both claims ``active``; neither may write such a shared new file
(:mod:`detente.domain.authority`). Either claim may ask for a room to settle it
(``POST /v1/claims/{id}/meetings``, ``detente meeting open``, MCP ``meeting_open``): the
room holds both claims and the targets they share, takes proposals and resolutions like
any other, and stays open while the potential overlap lasts (a narrowing that ends it
dissolves the room, :func:`detente.domain.settle.meeting_is_live`). Both claims stay
``active`` meanwhile: what they hold is unchanged, and the shared new paths stay
unwritable until a resolution assigns them.

A blocking overlap already has its room (the refusal names it); an advisory one (a
``joint`` group, an MCP file lease) needs none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.claims.guards import check_alive, check_claim_revision, get_claim
from detente.domain.meetings.model import MeetingStatus
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.model import Overlap, Severity
from detente.domain.policy import IdSource, Policy
from detente.domain.state import RepoState
from detente.domain.validation import text_field
from detente.errors import InvalidTransition, ValidationError

__all__ = ["RequestMeeting", "decide_request_meeting", "potential_between"]


@dataclass(frozen=True)
class RequestMeeting:
    """Claim ``claim_id`` (at ``expected_claim_revision``) asks to meet ``with_claim_id``."""

    claim_id: str
    expected_claim_revision: int
    with_claim_id: str
    reason: str | None = None


def potential_between(state: RepoState, claim_id: str, other_id: str) -> Overlap | None:
    """The ``potential`` overlap of two claims (None when they have none)."""
    claim = state.claims.get(claim_id)
    if claim is None or other_id not in state.claims:
        return None
    for overlap in find_overlaps(state, Targets.of(claim), exclude=claim_id):
        if overlap.claim_id == other_id and overlap.severity is Severity.POTENTIAL:
            return overlap
    return None


def decide_request_meeting(
    state: RepoState, cmd: RequestMeeting, now: datetime, ids: IdSource, policy: Policy
) -> list[ev.Event]:
    """Open a room for the potential overlap of two claims (see the module docstring).

    Returns:
        ``meeting.opened`` with both claims, the targets they share and ``requestedBy``.

    Raises:
        NotFoundError: ``not_found``: either claim.
        LeaseExpired, RevisionConflict: the asking claim's lease or revision.
        ValidationError: ``validation_error`` (field ``withClaimId``): the same claim, a
            claim that holds nothing, or no overlap to meet about (none, or an advisory
            one).
        InvalidTransition: ``invalid_transition``: the overlap is blocking (its room is
            named) or an open room of the two already exists.
    """
    claim = get_claim(state, cmd.claim_id)
    check_alive(claim, now)
    check_claim_revision(claim, cmd.expected_claim_revision)
    other = get_claim(state, cmd.with_claim_id)
    if other.id == claim.id or not other.holding:
        raise ValidationError(
            f"claim {other.id} is {'the asking claim' if other.id == claim.id else 'not live'}: "
            "name another live claim to meet",
            field="withClaimId",
        )
    reason = text_field(cmd.reason or "", "reason", policy, required=False) or None
    overlap = next(
        (
            o
            for o in find_overlaps(state, Targets.of(claim), exclude=claim.id)
            if o.claim_id == other.id
        ),
        None,
    )
    if overlap is None or overlap.severity is Severity.ADVISORY:
        raise ValidationError(
            f"claims {claim.id} and {other.id} "
            + ("do not overlap" if overlap is None else "overlap only advisorily")
            + ": there is nothing to meet about",
            field="withClaimId",
        )
    if overlap.severity is Severity.BLOCKING:
        raise InvalidTransition(
            "blocking",
            "open",
            f"the overlap of {claim.id} and {other.id} is blocking: it is negotiated in "
            f"the meeting it opened ({', '.join(claim.meeting_ids) or 'see claim status'})",
            meetingIds=list(claim.meeting_ids),
        )
    for room in state.meetings.values():
        if room.status is MeetingStatus.OPEN and {claim.id, other.id} <= set(room.participants):
            raise InvalidTransition(
                "open",
                "open",
                f"claims {claim.id} and {other.id} already meet in meeting {room.id}",
                meetingId=room.id,
            )
    contested = [
        {
            "target": t.theirs,
            "claimIds": sorted({claim.id, other.id}),
            "reason": f"potential {overlap.kind.value} overlap: {t.mine!r} vs {t.theirs!r} "
            f"(held by {other.id}), both cover {t.witness!r}, a path that exists at neither "
            f"base commit; meeting asked by {claim.id}" + (f": {reason}" if reason else ""),
        }
        for t in overlap.targets
    ]
    meeting_id = ids("mtg")
    return [
        ev.meeting_event(
            ids,
            meeting_id,
            ev.MEETING_OPENED,
            participants=[other.id, claim.id],
            contestedTargets=contested,
            deadline=format_time(policy.meeting_deadline(now)),
            requestedBy=claim.id,
        )
    ]
