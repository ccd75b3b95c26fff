"""The meeting operations: list, read, propose, accept, resolve (a human), hand off, and
open a room on request over a ``potential`` overlap."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from detente.operations import authorize as who
from detente.operations.declaration import Operation

#: Reads need the ``read`` role (held by every principal holding a role, unless
#: ``[roles] read`` lists its holders; see :mod:`detente.security.authn`).
READ = who.role("read")

if TYPE_CHECKING:
    from detente.operations import bodies as b
    from detente.operations import wire
    from detente.service import Service

__all__ = ["OPERATIONS"]


def _meeting(meeting: Any) -> wire.Meeting:
    from detente.domain.meetings.model import meeting_to_wire  # a remote client never needs it

    return cast("wire.Meeting", meeting_to_wire(meeting))


def list_meetings(
    service: Service, repo: str | None = None, status: str | None = None
) -> wire.MeetingList:
    meetings = service.meetings.list_meetings(repo=repo, status=status)
    return {"meetings": [_meeting(m) for m in meetings]}


def get_meeting(service: Service, meeting_id: str) -> wire.MeetingOut:
    return {"meeting": _meeting(service.meetings.get_meeting(meeting_id))}


def propose(service: Service, meeting_id: str, body: b.ProposalIn) -> wire.MeetingView:
    """A participant proposes a typed resolution; it accepts its own proposal."""
    view = service.meetings.propose(body.to_command(meeting_id))
    return cast("wire.MeetingView", view.to_wire())


def accept_proposal(
    service: Service, meeting_id: str, proposal_id: str, body: b.AcceptIn
) -> wire.MeetingView:
    """An affected participant accepts; the last acceptance applies the resolution."""
    view = service.meetings.accept(body.to_accept(meeting_id, proposal_id))
    return cast("wire.MeetingView", view.to_wire())


def resolve_meeting(service: Service, meeting_id: str, body: b.ResolveIn) -> wire.MeetingView:
    """Resolve as the authenticated human: ``resolvedBy`` is its owner handle (or
    name), never what the body claims (an admin's body is taken as written)."""
    view = service.meetings.resolve(body.to_command(meeting_id))
    return cast("wire.MeetingView", view.to_wire())


def accept_handoff(service: Service, meeting_id: str, body: b.AcceptIn) -> wire.MeetingView:
    """The recipient of a human-resolved handoff accepts the transfer."""
    view = service.meetings.accept_handoff(body.to_handoff(meeting_id))
    return cast("wire.MeetingView", view.to_wire())


def request_meeting(service: Service, claim_id: str, body: b.MeetingRequestIn) -> wire.MeetingView:
    """A claim asks for a room with another over their ``potential`` overlap."""
    view = service.meetings.request_meeting(body.to_command(claim_id))
    return cast("wire.MeetingView", view.to_wire())


_MEETING = ("revision_conflict", "lease_expired", "invalid_transition")

LIST_MEETINGS: Operation[wire.MeetingList] = Operation(
    "list_meetings", "GET", "/v1/meetings", list_meetings, rule=READ
)
GET_MEETING: Operation[wire.MeetingOut] = Operation(
    "get_meeting", "GET", "/v1/meetings/{meeting_id}", get_meeting, rule=READ
)
PROPOSE: Operation[wire.MeetingView] = Operation(
    "propose",
    "POST",
    "/v1/meetings/{meeting_id}/proposals",
    propose,
    rule=who.own_body_claim,
    conflicts=_MEETING,
    refuses=True,
)
ACCEPT_PROPOSAL: Operation[wire.MeetingView] = Operation(
    "accept_proposal",
    "POST",
    "/v1/meetings/{meeting_id}/proposals/{proposal_id}/accept",
    accept_proposal,
    rule=who.own_body_claim,
    conflicts=_MEETING,
    refuses=True,
)
RESOLVE_MEETING: Operation[wire.MeetingView] = Operation(
    "resolve_meeting",
    "POST",
    "/v1/meetings/{meeting_id}/resolve",
    resolve_meeting,
    rule=who.arbitrate,
    bind=who.as_resolver,
    conflicts=_MEETING,
    refuses=True,
)
ACCEPT_HANDOFF: Operation[wire.MeetingView] = Operation(
    "accept_handoff",
    "POST",
    "/v1/meetings/{meeting_id}/handoff/accept",
    accept_handoff,
    rule=who.own_body_claim,
    conflicts=_MEETING,
    refuses=True,
)

REQUEST_MEETING: Operation[wire.MeetingView] = Operation(
    "request_meeting",
    "POST",
    "/v1/claims/{claim_id}/meetings",
    request_meeting,
    rule=who.own_claim,
    conflicts=_MEETING,
    status_code=201,
)

#: In the order the HTTP API registers them.
OPERATIONS: tuple[Operation[Any], ...] = (
    LIST_MEETINGS,
    GET_MEETING,
    PROPOSE,
    ACCEPT_PROPOSAL,
    RESOLVE_MEETING,
    ACCEPT_HANDOFF,
    REQUEST_MEETING,
)
