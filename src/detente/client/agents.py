"""The advisory operations behind the MCP tools: agent sessions and readiness.

Advice only: readiness says ``ready`` or ``caution`` and never refuses on overlap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from detente.client.base import ClientBase
from detente.operations import agents as routes

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = ["AgentOperations"]


class AgentOperations(ClientBase):
    """``/v1/agents...`` and ``/v1/readiness``."""

    def register_agent(self, body: Mapping[str, Any]) -> wire.AgentOut:
        """``POST /v1/agents`` ``{sessionId, agentName, intent?, branch?, worktree?,
        ttlSeconds?, repo?}`` (re-registering renews): ``{agent}``."""
        return self._call(routes.REGISTER_AGENT, body=body)

    def list_agents(self, *, repo: str | None = None, status: str | None = None) -> wire.AgentList:
        """``GET /v1/agents``: ``{agents[]}`` with ``status`` active|departed (server clock)."""
        return self._call(routes.LIST_AGENTS, params={"repo": repo, "status": status})

    def get_agent(self, session_id: str) -> wire.AgentOut:
        """``GET /v1/agents/{sessionId}``: ``{agent}``; ``not_found`` if never registered."""
        return self._call(routes.GET_AGENT, path={"session_id": session_id})

    def session_claims(self, session_id: str, *, repo: str | None = None) -> wire.ClaimList:
        """``GET /v1/agents/{sessionId}/claims``: ``{claims[]}``, the session's claims that
        still hold their targets, oldest first (an unregistered session holds none)."""
        return self._call(
            routes.SESSION_CLAIMS, path={"session_id": session_id}, params={"repo": repo}
        )

    def session_notices(self, session_id: str, *, repo: str | None = None) -> wire.SessionNotices:
        """``GET /v1/agents/{sessionId}/notices``: ``{notices[], scannedUpTo, receipts}``,
        what woke the session since its notices were last delivered."""
        return self._call(
            routes.SESSION_NOTICES, path={"session_id": session_id}, params={"repo": repo}
        )

    def record_notices(self, session_id: str, receipt: str, up_to: int) -> wire.AgentOut:
        """``POST /v1/agents/{sessionId}/notices`` ``{receipt: delivered|seen, upTo}``:
        ``{agent}``; ``not_found`` for a session never registered, ``validation_error``
        for a position past the log (or ``seen`` past what was delivered)."""
        body = {"receipt": receipt, "upTo": up_to}
        return self._call(routes.RECORD_NOTICES, path={"session_id": session_id}, body=body)

    def list_keys(self) -> wire.KeyList:
        """``GET /v1/principals``: ``{principals[]}``, the registered agent keys."""
        return self._call(routes.LIST_KEYS)

    def register_key(self, name: str, public_key: str, roles: list[str]) -> wire.KeyOut:
        """``POST /v1/principals`` ``{name, publicKey, roles}`` (``admin``): ``{principal}``;
        the change is recorded in the log first."""
        body = {"name": name, "publicKey": public_key, "roles": list(roles)}
        return self._call(routes.REGISTER_KEY, body=body)

    def remove_key(self, name: str) -> wire.KeyOut:
        """``POST /v1/principals/remove`` ``{name}`` (``admin``): ``{principal}``, recorded
        in the log first; ``not_found`` for an unknown name."""
        return self._call(routes.REMOVE_KEY, body={"name": name})

    def readiness(
        self, session_id: str, paths: list[str], *, repo: str | None = None
    ) -> wire.Readiness:
        """``POST /v1/readiness``: ``{readiness: ready|caution, overlappingClaims[]}``."""
        body = {"sessionId": session_id, "paths": list(paths), "repo": repo}
        return self._call(routes.READINESS, body=body)
