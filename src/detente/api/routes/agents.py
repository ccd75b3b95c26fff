"""Agent registry and readiness routes (API.md "Agents and readiness").

``repo`` is optional in the bodies: it defaults to the repository the session is
registered in, else to the only repository served (``validation_error`` otherwise).
"""

from __future__ import annotations

from fastapi import APIRouter

from detente.client import routes as op
from detente.client import wire
from detente.client.agent_bodies import AgentIn, ReadinessIn
from detente.client.calls import ServiceCalls


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()

    @r.post(op.REGISTER_AGENT.path, operation_id=op.REGISTER_AGENT.name, status_code=201)
    def register_agent(body: AgentIn) -> wire.AgentOut:
        """Register a session or renew it (``expiresAt = now + ttlSeconds``): ``{agent}``."""
        return calls.register_agent(body)

    @r.get(op.LIST_AGENTS.path, operation_id=op.LIST_AGENTS.name)
    def list_agents(repo: str | None = None, status: str | None = None) -> wire.AgentList:
        """Sessions with ``status`` active|departed computed from the server clock."""
        return calls.list_agents(repo=repo, status=status)

    @r.get(op.GET_AGENT.path, operation_id=op.GET_AGENT.name)
    def get_agent(session_id: str) -> wire.AgentOut:
        """One session: ``{agent}``; ``404 not_found`` when never registered."""
        return calls.get_agent(session_id)

    @r.get(op.SESSION_CLAIMS.path, operation_id=op.SESSION_CLAIMS.name)
    def session_claims(session_id: str, repo: str | None = None) -> wire.ClaimList:
        """``{claims[]}``: the session's claims that still hold their targets, oldest first."""
        return calls.session_claims(session_id, repo=repo)

    @r.post(op.READINESS.path, operation_id=op.READINESS.name)
    def readiness(body: ReadinessIn) -> wire.Readiness:
        """``{readiness: ready|caution, overlappingClaims[]}``; never refuses on overlap."""
        return calls.readiness(body)

    return r
