"""Meeting use cases (API.md "Meetings"): read, propose, accept, resolve, hand off."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from detente.domain.claims.model import Claim
from detente.domain.claims.record import claim_to_wire
from detente.domain.events import MEETING_OPENED, Event
from detente.domain.meetings import decide as m
from detente.domain.meetings.commands import Accept, AcceptHandoff, Propose, Resolve
from detente.domain.meetings.model import Meeting, MeetingStatus, meeting_to_wire
from detente.domain.meetings.on_request import RequestMeeting
from detente.domain.meetings.resolutions import OwnersOf
from detente.domain.policy import IdSource
from detente.domain.state import RepoState
from detente.errors import NotFoundError, ValidationError
from detente.service.core import ServiceCore

N = TypeVar("N", Propose, Accept, Resolve)


@dataclass(frozen=True)
class MeetingView:
    """A meeting and the current records of its participants."""

    meeting: Meeting
    claims: list[Claim]

    def to_wire(self) -> dict[str, Any]:
        """``{meeting, claims[]}``."""
        return {
            "meeting": meeting_to_wire(self.meeting),
            "claims": [claim_to_wire(c) for c in self.claims],
        }


class MeetingsService:
    """Meeting rooms: read them, and negotiate typed resolutions in them."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def _repo_of_meeting(self, meeting_id: str) -> str:
        repo = self.core.find_repo(lambda state: meeting_id in state.meetings)
        if repo is not None:
            return repo
        raise NotFoundError(f"no meeting {meeting_id!r}", meetingId=meeting_id)

    def _meeting_command(
        self, meeting_id: str, decide_fn: Callable[[RepoState], list[Event]]
    ) -> MeetingView:
        repo = self._repo_of_meeting(meeting_id)

        def view(state: RepoState, _: object) -> MeetingView:  # inside the batch
            meeting = state.meetings[meeting_id]
            return MeetingView(meeting, [state.claims[c] for c in meeting.participants])

        return self.core.run(repo, decide_fn, view)

    def _negotiate(
        self,
        cmd: N,
        decide: Callable[[RepoState, N, datetime, IdSource, OwnersOf], list[Event]],
    ) -> MeetingView:
        """Run a negotiation decision (it may escalate, so it names the arbitrators)."""
        return self._meeting_command(
            cmd.meeting_id,
            lambda s: decide(
                s, cmd, self.core.clock.now(), self.core.ids, self.core.owners_of(s.repo)
            ),
        )

    def request_meeting(self, cmd: RequestMeeting) -> MeetingView:
        """Open a room for the ``potential`` overlap of two claims, asked by one of them
        (:mod:`detente.domain.meetings.on_request`).

        Raises:
            ``not_found``, ``lease_expired``, ``revision_conflict``, ``validation_error``
            (field ``withClaimId``: nothing to meet about), ``invalid_transition`` (a
            blocking overlap, or a room of the two already open).
        """
        from detente.domain.meetings.on_request import decide_request_meeting

        repo = self.core.find_repo(lambda state: cmd.claim_id in state.claims)
        if repo is None:
            raise NotFoundError(f"no claim {cmd.claim_id!r}", claimId=cmd.claim_id)

        def view(state: RepoState, stored: list[Any]) -> MeetingView:  # inside the batch
            opened = next(e for e in stored if e.type == MEETING_OPENED)
            meeting = state.meetings[str(opened.data["meetingId"])]
            return MeetingView(meeting, [state.claims[c] for c in meeting.participants])

        return self.core.run(
            repo,
            lambda s: decide_request_meeting(
                s, cmd, self.core.clock.now(), self.core.ids, self.core.policy
            ),
            view,
        )

    def get_meeting(self, meeting_id: str) -> Meeting:
        """A meeting (deadline escalation applied first). Raises ``not_found``."""
        for name in sorted(self.core.repos):
            state = self.core.fresh(name)
            if meeting_id in state.meetings:
                return state.meetings[meeting_id]
        raise NotFoundError(f"no meeting {meeting_id!r}", meetingId=meeting_id)

    def list_meetings(self, *, repo: str | None = None, status: str | None = None) -> list[Meeting]:
        """Meetings, optionally of one repo and one status (``open|resolved|escalated``)."""
        if status is not None and status not in {s.value for s in MeetingStatus}:
            raise ValidationError(f"unknown meeting status {status!r}", field="status")
        out: list[Meeting] = []
        for name in self.core.names(repo):
            state = self.core.fresh(name)
            out.extend(
                x for x in state.meetings.values() if status is None or x.status.value == status
            )
        return sorted(out, key=lambda x: (x.created_at, x.id))

    def propose(self, cmd: Propose) -> MeetingView:
        """Add a proposal (applied at once when nobody else is affected).

        Raises:
            ``not_found``, ``revision_conflict``, ``invalid_transition``, ``forbidden``,
            ``lease_expired``, ``validation_error``.
        """
        return self._negotiate(cmd, m.decide_propose)

    def accept(self, cmd: Accept) -> MeetingView:
        """Accept a proposal; the last affected acceptance applies it atomically."""
        return self._negotiate(cmd, m.decide_accept)

    def resolve(self, cmd: Resolve) -> MeetingView:
        """A human resolves (``forbidden`` unless an arbitrator once escalated)."""
        return self._negotiate(cmd, m.decide_resolve)

    def accept_handoff(self, cmd: AcceptHandoff) -> MeetingView:
        """The handoff recipient accepts; the sender's targets move to it."""
        return self._meeting_command(
            cmd.meeting_id,
            lambda s: m.decide_accept_handoff(s, cmd, self.core.clock.now(), self.core.ids),
        )
