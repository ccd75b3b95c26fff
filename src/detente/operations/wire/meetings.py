"""Meeting records and the answers of the meeting operations (API.md "Meetings")."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

from detente.operations.wire.record import Json, Time, record

__all__ = ["ContestedTarget", "Meeting", "MeetingList", "MeetingOut"]


@record
class ContestedTarget(TypedDict):
    """A target two or more participants contest, and why."""

    target: str
    claimIds: list[str]
    reason: str


@record
class Meeting(TypedDict):
    """A meeting room opened by a blocking overlap (API.md "Meetings").

    ``proposals`` are ``{id, claimId, resolution, affected[], acceptedBy[], status}``;
    ``resolution`` is the applied resolution ``{type, ..., meetingId, resolvedBy}`` (null
    while open, and for a dissolved meeting); ``outcome`` how a closed meeting ended
    (``resolved`` or ``dissolved``, null while open or escalated); ``dissolution``
    ``{reason}`` when no contest was left; ``options`` the resolution types that can
    settle the room; ``arbitrators`` the owners asked once escalated; ``notices``
    notifications to participants; ``requestedBy`` the claim that asked for the room
    over a ``potential`` overlap (null: a blocking overlap opened it); *(added)*
    ``mergeConflicts`` the predicted merge conflicts that opened or joined the room
    (``{claimIds[], against, files[], symbols[], hunks[{path, line, text}]}``; empty for
    a room an overlap opened).
    """

    id: str
    repo: str
    status: Literal["open", "resolved", "escalated"]
    revision: int
    participants: list[str]
    contestedTargets: list[ContestedTarget]
    proposals: list[dict[str, Json]]
    deadline: Time
    resolution: dict[str, Json] | None
    outcome: Literal["resolved", "dissolved"] | None
    dissolution: dict[str, Json] | None
    options: list[str]
    arbitrators: list[str]
    escalation: dict[str, Json] | None
    notices: list[dict[str, Json]]
    requestedBy: str | None
    mergeConflicts: list[dict[str, Json]]
    createdAt: Time
    updatedAt: Time


@record
class MeetingOut(TypedDict):
    """``{meeting}``."""

    meeting: Meeting


@record
class MeetingList(TypedDict):
    """``{meetings[]}``."""

    meetings: list[Meeting]
