"""Meeting rooms: where claims with a blocking overlap negotiate.

A room opens when a claim (or a scope change) meets a blocking overlap; later claims
contesting the same holders join it rather than spawning pairs. Participants propose
typed resolutions (:mod:`detente.domain.meetings.resolutions`); a proposal takes effect when every
affected participant has accepted it, or when a human resolves. An open meeting past its
deadline escalates to human arbitration (arbitrators from CODEOWNERS); it never resolves
itself. Every call names ``expectedMeetingRevision``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.claims.guards import check_alive, get_claim
from detente.domain.meetings.commands import Accept, AcceptHandoff, Propose, Resolve
from detente.domain.meetings.guards import check_meeting_revision, get_meeting
from detente.domain.meetings.model import Decided, Meeting, MeetingStatus
from detente.domain.meetings.resolution_events import apply_events
from detente.domain.meetings.resolution_types import HumanArbitration
from detente.domain.meetings.resolutions import OwnersOf, validate
from detente.domain.overlap.model import Overlap, Severity
from detente.domain.overlap.reasons import UNDECIDED_REASON
from detente.domain.policy import DEFAULT_POLICY, IdSource, Policy
from detente.domain.state import RepoState
from detente.domain.text_rules import visible
from detente.domain.validation import text_field
from detente.errors import (
    ForbiddenError,
    InvalidTransition,
    NotFoundError,
    ValidationError,
)


def blocking_only(overlaps: Sequence[Overlap]) -> list[Overlap]:
    return [o for o in overlaps if o.severity is Severity.BLOCKING]


def meeting_events_for(
    state: RepoState,
    claim_id: str,
    blocking: Sequence[Overlap],
    now: datetime,
    ids: IdSource,
    policy: Policy,
) -> tuple[list[str], list[ev.Event]]:
    """Put ``claim_id`` in a meeting for each contested held target. Returns the meeting
    ids (the first is its primary meeting) and the events.

    A contested target is the holder's pattern (``src/**``). A held target already
    contested in an open meeting is negotiated there: the claim joins that room, so
    several claims asking for parts of one target meet once instead of in pairs. The
    remaining targets are negotiated in one new room with their holders. When one open
    room already holds every claim it contests, it joins that room alone with all of its
    contested targets: one room per contested set, however many parties. A claim never
    drags its other contests into a room.
    """
    contested: dict[str, dict[str, Any]] = {}
    holders_of: dict[str, set[str]] = {}
    for o in blocking:
        for t in o.targets:
            entry = contested.setdefault(
                t.theirs,
                {
                    "target": t.theirs,
                    "claimIds": [],
                    "reason": f"{o.kind.value} overlap: {t.mine!r} vs {t.theirs!r} "
                    f"(held by {o.claim_id}), "
                    + (f"both cover {t.witness!r}" if t.witness is not None else UNDECIDED_REASON),
                },
            )
            entry["claimIds"] = sorted({*entry["claimIds"], claim_id, o.claim_id})
            holders_of.setdefault(t.theirs, set()).add(o.claim_id)
    rooms: dict[str, list[dict[str, Any]]] = {}
    fresh: list[dict[str, Any]] = []
    whole = _room_of_everyone(state, contested, {h for hs in holders_of.values() for h in hs})
    if whole is not None:  # one room per contest, however many parties and targets
        rooms[whole] = list(contested.values())
        contested = {}
    for target, entry in contested.items():
        room = state.meetings.room_of_target.get(target)
        if room is None:
            fresh.append(entry)
        else:
            rooms.setdefault(room, []).append(entry)
    events: list[ev.Event] = []
    meeting_ids: list[str] = []
    for meeting_id, entries in rooms.items():
        meeting_ids.append(meeting_id)
        events.append(
            ev.meeting_event(
                ids, meeting_id, ev.MEETING_JOINED, claimId=claim_id, contestedTargets=entries
            )
        )
    if fresh:
        meeting_id = ids("mtg")
        meeting_ids.append(meeting_id)
        holders = sorted({h for e in fresh for h in holders_of[e["target"]]})
        events.append(
            ev.meeting_opened(
                ids, meeting_id, [*holders, claim_id], fresh, policy.meeting_deadline(now)
            )
        )
    return meeting_ids, events


def _room_of_everyone(
    state: RepoState, contested: dict[str, dict[str, Any]], blockers: set[str]
) -> str | None:
    """An open room where every claim in ``blockers`` already sits (the room of one of
    the contested targets first, then any room of a blocker), or None."""
    candidates = [state.meetings.room_of_target.get(t) for t in contested]
    candidates += [m for b in sorted(blockers) for m in state.meetings.rooms_of_claim.get(b, ())]
    for meeting_id in dict.fromkeys(c for c in candidates if c is not None):
        meeting = state.meetings.get(meeting_id)
        if (
            meeting is not None
            and meeting.status is MeetingStatus.OPEN
            and blockers <= meeting.party_set
        ):
            return meeting_id
    return None


# ---------------------------------------------------------------------------- negotiation


def _require_status(meeting: Meeting, allowed_statuses: set[MeetingStatus], action: str) -> None:
    if meeting.status not in allowed_statuses:
        raise InvalidTransition(
            meeting.status.value,
            action,
            f"meeting {meeting.id} is {meeting.status.value}: cannot {action}",
            meetingId=meeting.id,
        )


def _live_participant(state: RepoState, meeting: Meeting, claim_id: str, now: datetime) -> None:
    if claim_id not in meeting.participants:
        raise ForbiddenError(
            f"claim {claim_id} is not a participant of meeting {meeting.id}",
            meetingId=meeting.id,
            claimId=claim_id,
        )
    check_alive(get_claim(state, claim_id), now)


def _resolution_events(
    state: RepoState,
    meeting: Meeting,
    decided: Decided,
    ids: IdSource,
    owners_of: OwnersOf,
    *,
    resolved_by: str,
    proposal_id: str | None = None,
) -> list[ev.Event]:
    if decided.resolution.escalates:
        return escalation_events(state, meeting, ids, owners_of, reason=f"asked by {resolved_by}")
    data: dict[str, Any] = {"resolution": replace(decided, resolved_by=resolved_by).to_wire()}
    if proposal_id is not None:
        data["proposalId"] = proposal_id
    resolved = ev.meeting_event(ids, meeting.id, ev.MEETING_RESOLVED, **data)
    return [resolved, *apply_events(state, meeting, decided.resolution, ids)]


def escalation_events(
    state: RepoState, meeting: Meeting, ids: IdSource, owners_of: OwnersOf, *, reason: str
) -> list[ev.Event]:
    """``meeting.escalated`` naming CODEOWNERS arbitrators, and ``claim.blocked`` for all."""
    paths = [t.target.partition("#")[0] for t in meeting.contested_targets]
    owners, invalid = owners_of(paths)
    escalated = ev.meeting_event(
        ids,
        meeting.id,
        ev.MEETING_ESCALATED,
        reason=reason,
        arbitrators=owners,
        contestedPaths=paths,
        invalidCodeownersLines=invalid,
    )
    blocked = apply_events(state, meeting, HumanArbitration(), ids)
    return [escalated, *blocked]


def decide_propose(
    state: RepoState, cmd: Propose, now: datetime, ids: IdSource, owners_of: OwnersOf
) -> list[ev.Event]:
    """Record a proposal; apply it at once when the proposer is the only affected claim.

    Raises:
        NotFoundError, RevisionConflict, InvalidTransition (meeting not open),
        ForbiddenError (not a participant), LeaseExpired, ValidationError.
    """
    meeting = get_meeting(state, cmd.meeting_id)
    check_meeting_revision(meeting, cmd.expected_meeting_revision)
    _require_status(meeting, {MeetingStatus.OPEN}, "propose")
    _live_participant(state, meeting, cmd.claim_id, now)
    decided = validate(state, meeting, cmd.resolution)
    proposal_id = ids("prp")
    added = ev.meeting_event(
        ids,
        meeting.id,
        ev.MEETING_PROPOSAL_ADDED,
        proposalId=proposal_id,
        claimId=cmd.claim_id,
        resolution=decided.to_wire(),
        affected=list(decided.affected),
        acceptedBy=[cmd.claim_id],
    )
    if set(decided.affected) <= {cmd.claim_id} or decided.resolution.escalates:
        applied = _resolution_events(
            state,
            meeting,
            _accepted(decided),
            ids,
            owners_of,
            resolved_by=cmd.claim_id,
            proposal_id=proposal_id,
        )
        return [added, *applied]
    return [added]


def _accepted(decided: Decided) -> Decided:
    """Acceptance by every affected claim includes the handoff recipient's."""
    return replace(decided, resolution=decided.resolution.accepted_by_all())


def decide_accept(
    state: RepoState, cmd: Accept, now: datetime, ids: IdSource, owners_of: OwnersOf
) -> list[ev.Event]:
    """Accept a proposal; the last affected acceptance applies it atomically.

    Raises:
        NotFoundError (meeting or proposal), RevisionConflict, InvalidTransition,
        ForbiddenError (not affected), LeaseExpired, ValidationError (already accepted).
    """
    meeting = get_meeting(state, cmd.meeting_id)
    check_meeting_revision(meeting, cmd.expected_meeting_revision)
    _require_status(meeting, {MeetingStatus.OPEN}, "accept")
    _live_participant(state, meeting, cmd.claim_id, now)
    proposal = next((p for p in meeting.proposals if p.id == cmd.proposal_id), None)
    if proposal is None or proposal.status != "open":
        raise NotFoundError(
            f"no open proposal {cmd.proposal_id!r} in meeting {meeting.id}",
            proposalId=cmd.proposal_id,
        )
    affected, accepted_by = proposal.affected, proposal.accepted_by
    if cmd.claim_id not in affected:
        raise ForbiddenError(
            f"claim {cmd.claim_id} is not affected by proposal {cmd.proposal_id}",
            proposalId=cmd.proposal_id,
        )
    if cmd.claim_id in accepted_by:
        raise ValidationError(
            f"claim {cmd.claim_id} already accepted proposal {cmd.proposal_id}", field="claimId"
        )
    out = [
        ev.meeting_event(
            ids,
            meeting.id,
            ev.MEETING_PROPOSAL_ACCEPTED,
            proposalId=cmd.proposal_id,
            claimId=cmd.claim_id,
        )
    ]
    if set(affected) <= {*accepted_by, cmd.claim_id}:
        decided = validate(state, meeting, proposal.decided.resolution.submitted())
        out += _resolution_events(
            state,
            meeting,
            _accepted(decided),
            ids,
            owners_of,
            resolved_by="participants",
            proposal_id=cmd.proposal_id,
        )
    return out


def decide_resolve(
    state: RepoState, cmd: Resolve, now: datetime, ids: IdSource, owners_of: OwnersOf
) -> list[ev.Event]:
    """A human resolves an open or escalated meeting.

    After an escalation with named arbitrators, only one of them may resolve.

    Raises:
        NotFoundError, RevisionConflict, InvalidTransition (already resolved),
        ForbiddenError (not an arbitrator), ValidationError.
    """
    meeting = get_meeting(state, cmd.meeting_id)
    check_meeting_revision(meeting, cmd.expected_meeting_revision)
    _require_status(meeting, {MeetingStatus.OPEN, MeetingStatus.ESCALATED}, "resolve")
    if not visible(cmd.resolved_by):
        raise ValidationError("resolvedBy must name the human principal", field="resolvedBy")
    who = text_field(cmd.resolved_by, "resolvedBy", DEFAULT_POLICY, identifier=True)
    if (
        meeting.status is MeetingStatus.ESCALATED
        and meeting.arbitrators
        and who not in meeting.arbitrators
    ):
        raise ForbiddenError(
            f"meeting {meeting.id} is escalated to {', '.join(meeting.arbitrators)}; "
            f"{who} is not one of its arbitrators",
            meetingId=meeting.id,
        )
    decided = validate(state, meeting, cmd.resolution)
    if decided.resolution.escalates and meeting.status is MeetingStatus.ESCALATED:
        raise InvalidTransition(
            "escalated", "escalated", f"meeting {meeting.id} is already escalated"
        )
    return _resolution_events(state, meeting, decided, ids, owners_of, resolved_by=who)


def decide_accept_handoff(
    state: RepoState, cmd: AcceptHandoff, now: datetime, ids: IdSource
) -> list[ev.Event]:
    """The recipient accepts a handoff; ownership moves to it now.

    Raises:
        NotFoundError, RevisionConflict, InvalidTransition (no pending handoff),
        ForbiddenError (not the recipient), LeaseExpired.
    """
    meeting = get_meeting(state, cmd.meeting_id)
    check_meeting_revision(meeting, cmd.expected_meeting_revision)
    pending = meeting.resolution.resolution if isinstance(meeting.resolution, Decided) else None
    recipient = pending.awaits() if pending is not None else None
    if pending is None or recipient is None:
        raise InvalidTransition(
            meeting.status.value, "handoff_accepted", f"meeting {meeting.id} has no pending handoff"
        )
    if cmd.claim_id != recipient:
        raise ForbiddenError(
            f"only the recipient {recipient} can accept this handoff",
            meetingId=meeting.id,
        )
    check_alive(get_claim(state, cmd.claim_id), now)
    accepted = ev.meeting_event(ids, meeting.id, ev.MEETING_HANDOFF_ACCEPTED, claimId=cmd.claim_id)
    return [accepted, *apply_events(state, meeting, pending.accepted_by_all(), ids)]


def decide_deadlines(
    state: RepoState, now: datetime, ids: IdSource, owners_of: OwnersOf
) -> list[ev.Event]:
    """Escalate every open meeting past its deadline (never resolve it by itself)."""
    out: list[ev.Event] = []
    open_now = [state.meetings[m] for m in state.meetings.open_ids]
    for meeting in sorted(open_now, key=lambda m: (m.deadline, m.id)):
        if meeting.status is MeetingStatus.OPEN and meeting.deadline <= now:
            out += escalation_events(
                state,
                meeting,
                ids,
                owners_of,
                reason=f"deadline {format_time(meeting.deadline)} passed",
            )
    return out


def due_meetings(state: RepoState, now: datetime) -> bool:
    """True when an open meeting is past its deadline (reads the earliest deadline of
    the open meetings)."""
    first = state.meetings.first_deadline()
    return first is not None and first <= now
