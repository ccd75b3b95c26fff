"""The resources: ``detente://claims/live`` and ``detente://activity/current``.

Both are JSON documents read on demand (no subscription): the live claims of the
repository, and the last tool calls of every session that is still active.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from detente.errors import DetenteError
from detente.mcp_server.results import compact, problem_data
from detente.mcp_server.shapes import holding, prune
from detente.mcp_server.toolkit import ToolContext

__all__ = ["ACTIVITY_URI", "CLAIMS_URI", "register"]

CLAIMS_URI = "detente://claims/live"
ACTIVITY_URI = "detente://activity/current"


def live_claims(ctx: ToolContext) -> dict[str, Any]:
    """``{claims[{claimId, sessionId, agentName, status, advisory, paths, expiresAt, reason}]}``."""
    claims = ctx.client.list_claims(repo=ctx.client.repo_name)["claims"]
    out = []
    for claim in claims:
        if not holding(claim):
            continue
        agent = claim.get("agent") or {}
        out.append(
            prune(
                {
                    "claimId": claim.get("id"),
                    "sessionId": agent.get("sessionId"),
                    "agentName": agent.get("name"),
                    "status": claim.get("status"),
                    "advisory": claim.get("advisory") or None,
                    "paths": claim.get("paths"),
                    "carveOuts": claim.get("carveOuts") or None,
                    "modules": claim.get("modules"),
                    "symbols": claim.get("symbols"),
                    "expiresAt": (claim.get("lease") or {}).get("expiresAt"),
                    "reason": claim.get("objective"),
                }
            )
        )
    return {"claims": out}


def current_activity(ctx: ToolContext) -> dict[str, Any]:
    """``{sessions[{sessionId, agentName, status, calls[{at, tool, scope, outcome}]}]}``.

    Sessions the registry lists as departed are left out; sessions that never
    registered are shown with status ``unregistered``. Most recently active first.
    """
    registry = {a["sessionId"]: a for a in ctx.agents(ctx.client.repo_name)}
    sessions = []
    for session_id, calls in reversed(ctx.activity.sessions().items()):
        agent = registry.get(session_id)
        status = agent.get("status") if agent else "unregistered"
        if status == "departed":
            continue
        sessions.append(
            prune(
                {
                    "sessionId": session_id,
                    "agentName": agent.get("agentName") if agent else None,
                    "status": status,
                    "intent": (agent.get("intent") or None) if agent else None,
                    "calls": [c.to_wire() for c in calls],
                }
            )
        )
    return {"sessions": sessions}


def register(mcp: MCPServer[Any], ctx: ToolContext) -> None:
    """Add the resources to ``mcp``."""

    @mcp.resource(
        CLAIMS_URI,
        name="live-claims",
        mime_type="application/json",
        description="Claims that hold files now (advisory file leases and protocol claims): "
        "who, which paths, until when, and why.",
    )
    def claims_resource() -> str:
        try:
            return compact(live_claims(ctx))
        except DetenteError as exc:
            raise ResourceError(compact(problem_data(exc))) from None

    @mcp.resource(
        ACTIVITY_URI,
        name="current-activity",
        mime_type="application/json",
        description="The last tool calls of every active session (tool, file/symbol scope, "
        "outcome), most recently active first.",
    )
    def activity_resource() -> str:
        try:
            return compact(current_activity(ctx))
        except DetenteError as exc:
            raise ResourceError(compact(problem_data(exc))) from None
