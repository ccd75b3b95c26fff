"""Follow-up rooms: a claim still contested by a claim it shares no open room with
negotiates with it in a room at once (pure).

Used by :func:`detente.domain.settle.settle` for a ``negotiating`` claim still blocked
by a claim outside its rooms, a ``blocked`` claim whose escalation was resolved, and an
``active`` claim whose pending targets meet a third holder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from detente.domain import events as ev
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.meetings.claim_grants import grant_pending_events
from detente.domain.meetings.decide import blocking_only, meeting_events_for
from detente.domain.meetings.model import Meeting
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.model import Overlap
from detente.domain.policy import IdSource, Policy
from detente.domain.state import RepoState

__all__ = ["follow_up", "negotiating", "restated", "settle_pending"]

#: A claim id as a status reason spells it.
_CLAIM_ID = re.compile(r"\bclm_[0-9A-Za-z]+")


def settle_pending(
    state: RepoState,
    claim: Claim,
    now: datetime,
    ids: IdSource,
    policy: Policy,
    roomed: dict[frozenset[str], list[str]],
    meetings: set[str],
) -> list[ev.Event]:
    """An ``active`` claim with pending targets (a handoff that met a third holder):
    grant them when nothing contests them, else negotiate for them in a room."""
    pending = Targets(
        paths=claim.pending_paths, base_commit=claim.base_commit, carve_outs=claim.carve_outs
    )
    blocking = blocking_only(find_overlaps(state, pending, exclude=claim.id))
    if not blocking:
        return grant_pending_events(ids, claim, "its pending targets are no longer contested")
    events = follow_up(state, claim, blocking, now, ids, policy)
    opened = [str(e.data["meetingId"]) for e in events if e.type.startswith("meeting.")]
    for o in blocking:
        roomed[frozenset({claim.id, o.claim_id})] = opened
    meetings.update(opened)
    return events


def follow_up(
    state: RepoState,
    claim: Claim,
    uncovered: Sequence[Overlap],
    now: datetime,
    ids: IdSource,
    policy: Policy,
) -> list[ev.Event]:
    """Put ``claim`` in a room with each claim in ``uncovered`` (join or open)."""
    meeting_ids, events = meeting_events_for(state, claim.id, uncovered, now, ids, policy)
    out = list(events)
    holders = {o.claim_id for o in uncovered}
    for event in events:
        if event.type != ev.MEETING_JOINED:
            continue
        meeting = state.meetings[str(event.data["meetingId"])]
        for holder in sorted(holders - set(meeting.participants)):
            out.append(
                ev.meeting_event(
                    ids, meeting.id, ev.MEETING_JOINED, claimId=holder, contestedTargets=[]
                )
            )
    out.append(negotiating(ids, claim, meeting_ids, uncovered))
    return out


def negotiating(
    ids: IdSource,
    claim: Claim,
    meeting_ids: Sequence[str],
    blockers: Sequence[Overlap],
    why: str = "follow-up room: still contested by ",
) -> ev.Event:
    return ev.status_event(
        ids,
        claim.id,
        ev.CLAIM_NEGOTIATING,
        to=ClaimStatus.NEGOTIATING.value,
        was=claim.status.value,
        reason=why + ", ".join(sorted({o.claim_id for o in blockers})),
        meetingId=meeting_ids[0],
        meetingIds=list(meeting_ids),
    )


def restated(
    state: RepoState,
    ids: IdSource,
    claim: Claim,
    blocking: Sequence[Overlap],
    rooms: Sequence[Meeting],
) -> list[ev.Event]:
    """A ``negotiating`` claim whose status reason names a claim that has left
    (completed, integrated, abandoned, expired unheld, taken over) states who holds it
    off now: one ``claim.negotiating`` naming ``blocking``'s claims, in its open
    ``rooms``. Empty when its reason names only live claims (or it has no room)."""
    reason = claim.status_reason or ""
    gone = [
        c for c in _CLAIM_ID.findall(reason) if c in state.claims and not state.claims[c].holding
    ]
    if not gone or not blocking or not rooms:
        return []
    return [negotiating(ids, claim, [m.id for m in rooms], blocking, "still contested by ")]
