"""The agent operations: register (or renew) a session, list and read sessions, a
session's claims, and readiness."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from detente.operations import authorize as who
from detente.operations.declaration import Operation

#: Reads need the ``read`` role (held by every principal holding a role, unless
#: ``[roles] read`` lists its holders; see :mod:`detente.security.authn`).
READ = who.role("read")

if TYPE_CHECKING:
    from detente.operations import agent_bodies as ab
    from detente.operations import wire
    from detente.service import Service

__all__ = ["OPERATIONS"]


def _claims(claims: Any) -> list[wire.Claim]:
    from detente.domain.claims.record import claim_to_wire  # a remote client never needs it

    return [claim_to_wire(c) for c in claims]


def register_agent(service: Service, body: ab.AgentIn) -> wire.AgentOut:
    """Register a session or renew it (``expiresAt = now + ttlSeconds``): ``{agent}``."""
    view = service.agents.register_agent(body.to_command())
    return {"agent": cast("wire.AgentSession", view.to_wire())}


def list_agents(
    service: Service, repo: str | None = None, status: str | None = None
) -> wire.AgentList:
    """Sessions with ``status`` active|departed computed from the server clock."""
    views = service.agents.list_agents(repo=repo, status=status)
    return {"agents": [cast("wire.AgentSession", a.to_wire()) for a in views]}


def get_agent(service: Service, session_id: str) -> wire.AgentOut:
    """One session: ``{agent}``; ``404 not_found`` when never registered."""
    view = service.agents.get_agent(session_id)
    return {"agent": cast("wire.AgentSession", view.to_wire())}


def session_claims(service: Service, session_id: str, repo: str | None = None) -> wire.ClaimList:
    """``{claims[]}``: the session's claims that still hold their targets, oldest first."""
    return {"claims": _claims(service.agents.session_claims(session_id, repo=repo))}


def readiness(service: Service, body: ab.ReadinessIn) -> wire.Readiness:
    """``{readiness: ready|caution, overlappingClaims[]}``; never refuses on overlap."""
    answer = service.agents.readiness(body.session_id, body.paths, repo=body.repo)
    return cast("wire.Readiness", answer.to_wire())


REGISTER_AGENT: Operation[wire.AgentOut] = Operation(
    "register_agent",
    "POST",
    "/v1/agents",
    register_agent,
    rule=who.register_agent,
    limit="agent-register",
    status_code=201,
)
LIST_AGENTS: Operation[wire.AgentList] = Operation(
    "list_agents", "GET", "/v1/agents", list_agents, rule=READ
)
GET_AGENT: Operation[wire.AgentOut] = Operation(
    "get_agent", "GET", "/v1/agents/{session_id}", get_agent, rule=READ
)
SESSION_CLAIMS: Operation[wire.ClaimList] = Operation(
    "session_claims", "GET", "/v1/agents/{session_id}/claims", session_claims, rule=READ
)
READINESS: Operation[wire.Readiness] = Operation(
    "readiness", "POST", "/v1/readiness", readiness, rule=who.role("claim")
)

#: In the order the HTTP API registers them.
OPERATIONS: tuple[Operation[Any], ...] = (
    REGISTER_AGENT,
    LIST_AGENTS,
    GET_AGENT,
    SESSION_CLAIMS,
    READINESS,
)
