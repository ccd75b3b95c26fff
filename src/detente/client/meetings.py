"""The meeting operations: list and read meetings, propose and accept resolutions,
resolve as a human, accept a handoff.

Every write sends the meeting revision it expects (``expectedMeetingRevision``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from detente.client.base import ClientBase
from detente.operations import meetings as routes

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = ["MeetingOperations"]


class MeetingOperations(ClientBase):
    """``/v1/meetings...``: one method per operation."""

    def list_meetings(
        self, *, repo: str | None = None, status: str | None = None
    ) -> wire.MeetingList:
        """``GET /v1/meetings``: ``{meetings[]}``."""
        return self._call(routes.LIST_MEETINGS, params={"repo": repo, "status": status})

    def get_meeting(self, meeting_id: str) -> wire.MeetingOut:
        """``GET /v1/meetings/{id}``: ``{meeting}``."""
        return self._call(routes.GET_MEETING, path={"meeting_id": meeting_id})

    def propose(
        self,
        meeting_id: str,
        *,
        expected_meeting_revision: int,
        claim_id: str,
        resolution: Mapping[str, Any],
    ) -> wire.MeetingView:
        """``POST /v1/meetings/{id}/proposals`` (proposer accepts it): ``{meeting, claims[]}``."""
        body = {
            "expectedMeetingRevision": expected_meeting_revision,
            "claimId": claim_id,
            "resolution": dict(resolution),
        }
        return self._call(routes.PROPOSE, path={"meeting_id": meeting_id}, body=body)

    def accept_proposal(
        self, meeting_id: str, proposal_id: str, *, expected_meeting_revision: int, claim_id: str
    ) -> wire.MeetingView:
        """``POST /v1/meetings/{id}/proposals/{proposalId}/accept``: ``{meeting, claims[]}``."""
        body = {"expectedMeetingRevision": expected_meeting_revision, "claimId": claim_id}
        where = {"meeting_id": meeting_id, "proposal_id": proposal_id}
        return self._call(routes.ACCEPT_PROPOSAL, path=where, body=body)

    def resolve_meeting(
        self,
        meeting_id: str,
        *,
        expected_meeting_revision: int,
        resolution: Mapping[str, Any],
        resolved_by: str,
    ) -> wire.MeetingView:
        """``POST /v1/meetings/{id}/resolve`` (a human principal): ``{meeting, claims[]}``."""
        body = {
            "expectedMeetingRevision": expected_meeting_revision,
            "resolution": dict(resolution),
            "resolvedBy": resolved_by,
        }
        return self._call(routes.RESOLVE_MEETING, path={"meeting_id": meeting_id}, body=body)

    def accept_handoff(
        self, meeting_id: str, *, expected_meeting_revision: int, claim_id: str
    ) -> wire.MeetingView:
        """``POST /v1/meetings/{id}/handoff/accept`` (the recipient): ``{meeting, claims[]}``."""
        body = {"expectedMeetingRevision": expected_meeting_revision, "claimId": claim_id}
        return self._call(routes.ACCEPT_HANDOFF, path={"meeting_id": meeting_id}, body=body)

    def request_meeting(
        self,
        claim_id: str,
        *,
        expected_claim_revision: int,
        with_claim_id: str,
        reason: str | None = None,
    ) -> wire.MeetingView:
        """``POST /v1/claims/{id}/meetings`` (a room over a potential overlap):
        ``{meeting, claims[]}``."""
        body: dict[str, Any] = {
            "expectedClaimRevision": expected_claim_revision,
            "withClaimId": with_claim_id,
        }
        if reason is not None:
            body["reason"] = reason
        return self._call(routes.REQUEST_MEETING, path={"claim_id": claim_id}, body=body)
