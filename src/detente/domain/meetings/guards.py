"""The checks every meeting decision starts with: the room exists and its revision is current."""

from __future__ import annotations

from detente.domain.meetings.model import Meeting, meeting_to_wire
from detente.domain.state import RepoState
from detente.domain.validation import check_revision, found


def get_meeting(state: RepoState, meeting_id: str) -> Meeting:
    """The meeting, or ``not_found``."""
    return found(state.meetings.get(meeting_id), f"no meeting {meeting_id!r}", meetingId=meeting_id)


def check_meeting_revision(meeting: Meeting, expected: int) -> None:
    """``revision_conflict`` (with the current meeting) unless ``expected`` is current."""
    check_revision("meeting", meeting, expected, meeting_to_wire)
