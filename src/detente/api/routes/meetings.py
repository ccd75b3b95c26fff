"""Meeting routes (API.md "Meetings"): list, read, propose, accept, resolve, hand off."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from detente.api.schemas import AcceptIn, ProposalIn, ResolveIn
from detente.domain.meetings.commands import Accept, AcceptHandoff, Propose, Resolve
from detente.domain.meetings.model import meeting_to_wire
from detente.service import Service


def router(service: Service) -> APIRouter:
    r = APIRouter()

    @r.get("/v1/meetings")
    def list_meetings(repo: str | None = None, status: str | None = None) -> dict[str, Any]:
        meetings = service.list_meetings(repo=repo, status=status)
        return {"meetings": [meeting_to_wire(x) for x in meetings]}

    @r.get("/v1/meetings/{meeting_id}")
    def get_meeting(meeting_id: str) -> dict[str, Any]:
        return {"meeting": meeting_to_wire(service.get_meeting(meeting_id))}

    @r.post("/v1/meetings/{meeting_id}/proposals")
    def propose(meeting_id: str, body: ProposalIn) -> dict[str, Any]:
        """A participant proposes a typed resolution; it accepts its own proposal."""
        cmd = Propose(meeting_id, body.expected_meeting_revision, body.claim_id, body.resolution)
        return service.propose(cmd).to_wire()

    @r.post("/v1/meetings/{meeting_id}/proposals/{proposal_id}/accept")
    def accept(meeting_id: str, proposal_id: str, body: AcceptIn) -> dict[str, Any]:
        """An affected participant accepts; the last acceptance applies the resolution."""
        cmd = Accept(meeting_id, body.expected_meeting_revision, body.claim_id, proposal_id)
        return service.accept(cmd).to_wire()

    @r.post("/v1/meetings/{meeting_id}/resolve")
    def resolve(meeting_id: str, body: ResolveIn) -> dict[str, Any]:
        """A human principal resolves (an arbitrator, once the meeting escalated)."""
        cmd = Resolve(meeting_id, body.expected_meeting_revision, body.resolution, body.resolved_by)
        return service.resolve(cmd).to_wire()

    @r.post("/v1/meetings/{meeting_id}/handoff/accept")
    def accept_handoff(meeting_id: str, body: AcceptIn) -> dict[str, Any]:
        """The recipient of a human-resolved handoff accepts the transfer."""
        cmd = AcceptHandoff(meeting_id, body.expected_meeting_revision, body.claim_id)
        return service.accept_handoff(cmd).to_wire()

    return r
