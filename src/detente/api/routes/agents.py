"""Agent registry and readiness routes (API.md "Agents and readiness").

``repo`` is optional in the bodies: it defaults to the repository the session is
registered in, else to the only repository served (``validation_error`` otherwise).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from detente.api.agent_schemas import AgentIn, ReadinessIn
from detente.service import Service


def router(service: Service) -> APIRouter:
    r = APIRouter()

    @r.post("/v1/agents", status_code=201)
    def register_agent(body: AgentIn) -> dict[str, Any]:
        """Register a session or renew it (``expiresAt = now + ttlSeconds``): ``{agent}``."""
        return {"agent": service.register_agent(body.to_command()).to_wire()}

    @r.get("/v1/agents")
    def list_agents(repo: str | None = None, status: str | None = None) -> dict[str, Any]:
        """Sessions with ``status`` active|departed computed from the server clock."""
        return {"agents": [a.to_wire() for a in service.list_agents(repo=repo, status=status)]}

    @r.get("/v1/agents/{session_id}")
    def get_agent(session_id: str) -> dict[str, Any]:
        """One session: ``{agent}``; ``404 not_found`` when never registered."""
        return {"agent": service.get_agent(session_id).to_wire()}

    @r.post("/v1/readiness")
    def readiness(body: ReadinessIn) -> dict[str, Any]:
        """``{readiness: ready|caution, overlappingClaims[]}``; never refuses on overlap."""
        return service.readiness(body.session_id, body.paths, repo=body.repo).to_wire()

    return r
