"""The meetings area of the HTTP API: list and read meetings, propose and accept
resolutions, resolve as a human, accept a handoff.

Every write sends the meeting revision it expects (``expectedMeetingRevision``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from detente.cli.client.transport import Transport

__all__ = ["MeetingsEndpoints"]


class MeetingsEndpoints(Transport):
    """``/v1/meetings...``: one method per endpoint."""

    def list_meetings(
        self, *, repo: str | None = None, status: str | None = None
    ) -> dict[str, Any]:
        """``GET /v1/meetings``: ``{meetings[]}``."""
        return self._request("GET", "/v1/meetings", params={"repo": repo, "status": status})

    def get_meeting(self, meeting_id: str) -> dict[str, Any]:
        """``GET /v1/meetings/{id}``: ``{meeting}``."""
        return self._request("GET", f"/v1/meetings/{meeting_id}")

    def propose(
        self,
        meeting_id: str,
        *,
        expected_meeting_revision: int,
        claim_id: str,
        resolution: Mapping[str, Any],
    ) -> dict[str, Any]:
        """``POST /v1/meetings/{id}/proposals`` (proposer accepts it): ``{meeting, claims[]}``."""
        body = {
            "expectedMeetingRevision": expected_meeting_revision,
            "claimId": claim_id,
            "resolution": dict(resolution),
        }
        return self._request("POST", f"/v1/meetings/{meeting_id}/proposals", json=body)

    def accept_proposal(
        self, meeting_id: str, proposal_id: str, *, expected_meeting_revision: int, claim_id: str
    ) -> dict[str, Any]:
        """``POST /v1/meetings/{id}/proposals/{proposalId}/accept``: ``{meeting, claims[]}``."""
        body = {"expectedMeetingRevision": expected_meeting_revision, "claimId": claim_id}
        return self._request(
            "POST", f"/v1/meetings/{meeting_id}/proposals/{proposal_id}/accept", json=body
        )

    def resolve_meeting(
        self,
        meeting_id: str,
        *,
        expected_meeting_revision: int,
        resolution: Mapping[str, Any],
        resolved_by: str,
    ) -> dict[str, Any]:
        """``POST /v1/meetings/{id}/resolve`` (a human principal): ``{meeting, claims[]}``."""
        body = {
            "expectedMeetingRevision": expected_meeting_revision,
            "resolution": dict(resolution),
            "resolvedBy": resolved_by,
        }
        return self._request("POST", f"/v1/meetings/{meeting_id}/resolve", json=body)

    def accept_handoff(
        self, meeting_id: str, *, expected_meeting_revision: int, claim_id: str
    ) -> dict[str, Any]:
        """``POST /v1/meetings/{id}/handoff/accept`` (the recipient): ``{meeting, claims[]}``."""
        body = {"expectedMeetingRevision": expected_meeting_revision, "claimId": claim_id}
        return self._request("POST", f"/v1/meetings/{meeting_id}/handoff/accept", json=body)
