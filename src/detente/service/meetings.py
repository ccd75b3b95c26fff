"""Meeting use cases (API.md "Meetings")."""

from __future__ import annotations

from detente.domain.model import Meeting
from detente.errors import NotFoundError
from detente.service.core import ServiceCore


class MeetingsService(ServiceCore):
    """Reading meeting rooms."""

    # ------------------------------------------------------------------ meetings

    def get_meeting(self, meeting_id: str) -> Meeting:
        for name in sorted(self.repos):
            state = self._fresh(name)
            if meeting_id in state.meetings:
                return state.meetings[meeting_id]
        raise NotFoundError(f"no meeting {meeting_id!r}", meetingId=meeting_id)

    def list_meetings(self, *, repo: str | None = None, status: str | None = None) -> list[Meeting]:
        out: list[Meeting] = []
        for name in [repo] if repo else sorted(self.repos):
            state = self._fresh(name)
            out.extend(
                m for m in state.meetings.values() if status is None or m.status.value == status
            )
        return sorted(out, key=lambda m: (m.created_at, m.id))
