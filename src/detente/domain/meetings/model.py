"""The meeting record: a room where overlapping claims settle a contested set of targets.

Frozen dataclasses, replaced wholesale by :mod:`detente.domain.meetings.evolve`; times are
timezone-aware UTC.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from detente.clock import format_time
from detente.domain.meetings.resolution_types import RESOLUTION_TYPES, Outcome, Proposal


class MeetingStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"
    ESCALATED = "escalated"


@dataclass(frozen=True)
class ContestedTarget:
    target: str
    claim_ids: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Meeting:
    """A meeting room opened by a blocking overlap.

    ``proposals`` are the proposed resolutions (:class:`Proposal`); ``resolution`` is what
    closed the meeting: the applied resolution (:class:`Decided`) or a dissolution;
    ``arbitrators`` are the CODEOWNERS owners asked to decide after an escalation;
    ``notices`` are notifications to participants (e.g. a serialized first expired).
    """

    id: str
    repo: str
    status: MeetingStatus
    revision: int
    participants: tuple[str, ...]
    contested_targets: tuple[ContestedTarget, ...]
    deadline: datetime
    created_at: datetime
    updated_at: datetime
    proposals: tuple[Proposal, ...] = ()
    resolution: Outcome | None = None
    options: tuple[str, ...] = field(default=RESOLUTION_TYPES)
    arbitrators: tuple[str, ...] = ()
    escalation: dict[str, object] | None = None
    notices: tuple[dict[str, object], ...] = ()
    last_event_id: str | None = None


def meeting_to_wire(meeting: Meeting) -> dict[str, Any]:
    """A meeting as the API.md record."""
    return {
        "id": meeting.id,
        "repo": meeting.repo,
        "status": meeting.status.value,
        "revision": meeting.revision,
        "participants": list(meeting.participants),
        "contestedTargets": [
            {"target": t.target, "claimIds": list(t.claim_ids), "reason": t.reason}
            for t in meeting.contested_targets
        ],
        "proposals": [p.to_wire() for p in meeting.proposals],
        "deadline": format_time(meeting.deadline),
        "resolution": meeting.resolution.to_wire() if meeting.resolution is not None else None,
        "options": list(meeting.options),
        "arbitrators": list(meeting.arbitrators),
        "escalation": meeting.escalation,
        "notices": list(meeting.notices),
        "createdAt": format_time(meeting.created_at),
        "updatedAt": format_time(meeting.updated_at),
    }


def past_deadline(meetings: Iterable[Meeting], now: datetime) -> bool:
    """True when one of ``meetings`` is open and past its deadline (``now``: aware UTC)."""
    return any(m.status is MeetingStatus.OPEN and m.deadline <= now for m in meetings)
