"""Meeting routes (API.md "Meetings"): list, read, propose, accept, resolve, hand off."""

from __future__ import annotations

from fastapi import APIRouter

from detente.client import routes as op
from detente.client import wire
from detente.client.bodies import AcceptIn, ProposalIn, ResolveIn
from detente.client.calls import ServiceCalls


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()

    @r.get(op.LIST_MEETINGS.path, operation_id=op.LIST_MEETINGS.name)
    def list_meetings(repo: str | None = None, status: str | None = None) -> wire.MeetingList:
        return calls.list_meetings(repo=repo, status=status)

    @r.get(op.GET_MEETING.path, operation_id=op.GET_MEETING.name)
    def get_meeting(meeting_id: str) -> wire.MeetingOut:
        return calls.get_meeting(meeting_id)

    @r.post(op.PROPOSE.path, operation_id=op.PROPOSE.name)
    def propose(meeting_id: str, body: ProposalIn) -> wire.MeetingView:
        """A participant proposes a typed resolution; it accepts its own proposal."""
        return calls.propose(meeting_id, body)

    @r.post(op.ACCEPT_PROPOSAL.path, operation_id=op.ACCEPT_PROPOSAL.name)
    def accept(meeting_id: str, proposal_id: str, body: AcceptIn) -> wire.MeetingView:
        """An affected participant accepts; the last acceptance applies the resolution."""
        return calls.accept_proposal(meeting_id, proposal_id, body)

    @r.post(op.RESOLVE_MEETING.path, operation_id=op.RESOLVE_MEETING.name)
    def resolve(meeting_id: str, body: ResolveIn) -> wire.MeetingView:
        """A human principal resolves (an arbitrator, once the meeting escalated)."""
        return calls.resolve_meeting(meeting_id, body)

    @r.post(op.ACCEPT_HANDOFF.path, operation_id=op.ACCEPT_HANDOFF.name)
    def accept_handoff(meeting_id: str, body: AcceptIn) -> wire.MeetingView:
        """The recipient of a human-resolved handoff accepts the transfer."""
        return calls.accept_handoff(meeting_id, body)

    return r
