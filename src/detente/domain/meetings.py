"""Meeting rooms: where claims with a blocking overlap negotiate.

This version opens a room when a claim (or a scope change) meets a blocking overlap and
lets later claims contesting the same holders join it; proposals and typed resolutions
build on these records.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.commands import IdSource, Policy
from detente.domain.model import MeetingStatus, Overlap, Severity
from detente.domain.state import RepoState


def blocking_only(overlaps: Sequence[Overlap]) -> list[Overlap]:
    return [o for o in overlaps if o.severity is Severity.BLOCKING]


def meeting_events_for(
    state: RepoState,
    claim_id: str,
    blocking: Sequence[Overlap],
    now: datetime,
    ids: IdSource,
    policy: Policy,
) -> tuple[str, list[ev.Event]]:
    """Join an open meeting of one of the holders, or open a new one. Returns its id."""
    contested = [
        {
            "target": t.witness,
            "claimIds": sorted({claim_id, o.claim_id}),
            "reason": f"{o.kind.value} overlap: {t.mine!r} vs {t.theirs!r}",
        }
        for o in blocking
        for t in o.targets
    ]
    holders = {o.claim_id for o in blocking}
    for meeting in sorted(state.meetings.values(), key=lambda m: m.created_at):
        if meeting.status is MeetingStatus.OPEN and holders & set(meeting.participants):
            joined = ev.Event(
                id=ids("evt"),
                type=ev.MEETING_JOINED,
                subject=ev.meeting_subject(meeting.id),
                data={"meetingId": meeting.id, "claimId": claim_id, "contestedTargets": contested},
            )
            return meeting.id, [joined]
    meeting_id = ids("mtg")
    opened = ev.Event(
        id=ids("evt"),
        type=ev.MEETING_OPENED,
        subject=ev.meeting_subject(meeting_id),
        data={
            "meetingId": meeting_id,
            "participants": [*sorted(holders), claim_id],
            "contestedTargets": contested,
            "deadline": format_time(now + timedelta(seconds=policy.meeting_deadline_seconds)),
        },
    )
    return meeting_id, [opened]
