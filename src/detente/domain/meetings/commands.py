"""The meeting commands: propose a resolution, accept it, resolve by arbitration, hand off."""

from __future__ import annotations

from dataclasses import dataclass

from detente.domain.meetings.resolution_types import Resolution


@dataclass(frozen=True)
class Propose:
    """A participant proposes a typed resolution (it accepts its own proposal)."""

    meeting_id: str
    expected_meeting_revision: int
    claim_id: str
    resolution: Resolution


@dataclass(frozen=True)
class Accept:
    """An affected participant accepts a proposal (``proposal_id``)."""

    meeting_id: str
    expected_meeting_revision: int
    claim_id: str
    proposal_id: str


@dataclass(frozen=True)
class Resolve:
    """A human principal resolves (directly, or after an escalation as its arbitrator)."""

    meeting_id: str
    expected_meeting_revision: int
    resolution: Resolution
    resolved_by: str


@dataclass(frozen=True)
class AcceptHandoff:
    """The recipient of a handoff resolved by a human accepts the transfer."""

    meeting_id: str
    expected_meeting_revision: int
    claim_id: str
