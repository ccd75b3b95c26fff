"""Follow-up decisions that events trigger in the same transaction (a process manager).

After a command's events are folded in, :func:`react` looks at them and returns the
events they imply:

- ``meeting.resolved`` / ``meeting.handoff_accepted``: activate the claims the resolution
  unblocked (checked against the state *after* the resolution's scope changes);
- a serialized ``first`` claim integrated, completed, abandoned or taken over, or
  narrowed until it shares no target with a ``then`` claim waiting behind it: each such
  ``then`` resumes (``active``, or ``negotiating`` if something else now blocks it),
  with a notice on the meeting;
- a serialized ``first`` claim expired: each waiting ``then`` gets a notice and stays
  ``suspended`` (expiry freezes work; it does not hand it over silently).

- any command: :mod:`detente.domain.settle` settles or rooms the contests it touched.

The service calls :func:`react` repeatedly until it returns nothing (bounded).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from detente.domain import events as ev
from detente.domain.claims.model import ClaimStatus
from detente.domain.meetings.model import Decided, MeetingStatus
from detente.domain.meetings.resolution_events import activation_events, still_blocked
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.policy import DEFAULT_POLICY, IdSource, Policy
from detente.domain.settle import settle
from detente.domain.state import RepoState

_RELEASED = frozenset(
    {ClaimStatus.INTEGRATED, ClaimStatus.COMPLETED, ClaimStatus.ABANDONED, ClaimStatus.TAKEN_OVER}
)


def react(
    state: RepoState,
    batch: Sequence[tuple[str, dict[str, Any]]],
    ids: IdSource,
    now: datetime | None = None,
    policy: Policy = DEFAULT_POLICY,
) -> list[ev.Event]:
    """Events implied by ``batch`` (``(type, data)`` pairs already folded into ``state``).

    ``now`` (the server's time) enables :func:`detente.domain.settle.settle`: contests the
    batch touched are settled (claims activated, rooms dissolved) or roomed at once.
    """
    out = _react(state, batch, ids)
    if now is None:
        return out
    moving = {str(e.data["claimId"]) for e in out if "claimId" in e.data}
    return out + settle(state, batch, ids, now, policy, skip=moving)


def _react(
    state: RepoState, batch: Sequence[tuple[str, dict[str, Any]]], ids: IdSource
) -> list[ev.Event]:
    out: list[ev.Event] = []
    resumed: set[str] = set()  # one batch may release a first twice (integrated, completed)
    for event_type, data in batch:
        if event_type in (ev.MEETING_RESOLVED, ev.MEETING_HANDOFF_ACCEPTED):
            meeting = state.meetings[str(data["meetingId"])]
            if isinstance(meeting.resolution, Decided) and meeting.status is MeetingStatus.RESOLVED:
                out += activation_events(state, meeting, meeting.resolution, ids)
            continue
        narrowed = event_type == ev.CLAIM_SCOPE_CHANGED
        if not event_type.startswith("claim.") or ("status" not in data and not narrowed):
            continue
        first = str(data["claimId"])
        status = ClaimStatus(data["status"]) if "status" in data else None
        for then_id in sorted(state.meetings.serialized.get(first, ())):
            then = state.claims.get(then_id)
            if then is None or then.status is not ClaimStatus.SUSPENDED or then_id in resumed:
                continue
            meeting_id = _serialize_meeting(state, first, then_id)
            let_go = narrowed and not _shares(state, first, then_id)
            if status in _RELEASED or let_go:
                resumed.add(then_id)
                blocked = still_blocked(state, then)
                to = ClaimStatus.NEGOTIATING if blocked else ClaimStatus.ACTIVE
                why = (
                    f"{first} no longer shares a target with it"
                    if status is None
                    else f"{first} is {status.value}"
                )
                reason = f"{why}: serialized turn of {then_id} begins"
                out.append(
                    ev.status_event(
                        ids,
                        then_id,
                        ev.CLAIM_RESUMED,
                        to=to.value,
                        was=then.status.value,
                        reason=reason,
                        releasedBy=first,
                        meetingId=meeting_id,
                    )
                )
                if meeting_id is not None:
                    out.append(_notice(ids, meeting_id, then_id, reason))
            elif status is ClaimStatus.EXPIRED and meeting_id is not None:
                out.append(
                    _notice(
                        ids,
                        meeting_id,
                        then_id,
                        f"{first} (serialized first) expired; {then_id} stays suspended: "
                        f"take {first} over or ask for arbitration",
                    )
                )
    return out


def _shares(state: RepoState, first: str, then_id: str) -> bool:
    """Does the ``then`` claim still overlap its serialized ``first`` at all?"""
    then = state.claims[then_id]
    return any(o.claim_id == first for o in find_overlaps(state, Targets.of(then), exclude=then_id))


def _serialize_meeting(state: RepoState, first: str, then: str) -> str | None:
    settled = state.meetings.resolved_pairs.get(frozenset({first, then}))
    return settled.meeting_id if settled is not None else None


def _notice(ids: IdSource, meeting_id: str, claim_id: str, reason: str) -> ev.Event:
    return ev.meeting_event(ids, meeting_id, ev.MEETING_NOTICE, claimId=claim_id, reason=reason)
