"""Meeting routes (API.md "Meetings"): list, read, propose, accept, resolve, hand off."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from detente.client import routes as op
from detente.client.bodies import AcceptIn, ProposalIn, ResolveIn
from detente.client.inprocess import ServiceCalls


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()

    @r.get(op.LIST_MEETINGS.path)
    def list_meetings(repo: str | None = None, status: str | None = None) -> dict[str, Any]:
        return calls.list_meetings(repo=repo, status=status)

    @r.get(op.GET_MEETING.path)
    def get_meeting(meeting_id: str) -> dict[str, Any]:
        return calls.get_meeting(meeting_id)

    @r.post(op.PROPOSE.path)
    def propose(meeting_id: str, body: ProposalIn) -> dict[str, Any]:
        """A participant proposes a typed resolution; it accepts its own proposal."""
        return calls.propose(meeting_id, body)

    @r.post(op.ACCEPT_PROPOSAL.path)
    def accept(meeting_id: str, proposal_id: str, body: AcceptIn) -> dict[str, Any]:
        """An affected participant accepts; the last acceptance applies the resolution."""
        return calls.accept_proposal(meeting_id, proposal_id, body)

    @r.post(op.RESOLVE_MEETING.path)
    def resolve(meeting_id: str, body: ResolveIn) -> dict[str, Any]:
        """A human principal resolves (an arbitrator, once the meeting escalated)."""
        return calls.resolve_meeting(meeting_id, body)

    @r.post(op.ACCEPT_HANDOFF.path)
    def accept_handoff(meeting_id: str, body: AcceptIn) -> dict[str, Any]:
        """The recipient of a human-resolved handoff accepts the transfer."""
        return calls.accept_handoff(meeting_id, body)

    return r
