"""Request bodies of the agent registry and readiness routes (API.md "Agents and readiness").

Validated by the HTTP routers and by the in-process client alike.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from detente.domain.agents.commands import RecordNotices, RegisterAgent
from detente.operations.body import Body

__all__ = ["AgentIn", "KeyIn", "KeyRemoveIn", "NoticesIn", "ReadinessIn"]


class AgentIn(Body):
    """``POST /v1/agents``: register or renew a session (``ttlSeconds``; the claim
    seed's ``leaseTtlSeconds`` is an alias)."""

    aliases: ClassVar[dict[str, str]] = {"leaseTtlSeconds": "ttlSeconds"}

    session_id: str = Field(min_length=1, max_length=128)
    agent_name: str = Field(min_length=1, max_length=200)
    intent: str = Field(default="", max_length=4000)
    branch: str | None = None
    worktree: str | None = None
    ttl_seconds: int = Field(default=900, strict=True)
    repo: str | None = None

    def to_command(self) -> RegisterAgent:
        return RegisterAgent(
            repo=self.repo or "",
            session_id=self.session_id,
            agent_name=self.agent_name,
            ttl_seconds=self.ttl_seconds,
            intent=self.intent,
            branch=self.branch,
            worktree=self.worktree,
        )


class NoticesIn(Body):
    """``POST /v1/agents/{sessionId}/notices``: a receipt of the session's notices."""

    receipt: Literal["delivered", "seen"]
    up_to: int = Field(ge=0, strict=True)

    def to_command(self, session_id: str) -> RecordNotices:
        return RecordNotices(session_id=session_id, receipt=self.receipt, up_to=self.up_to)


class ReadinessIn(Body):
    """``POST /v1/readiness``: may this session edit these paths without meeting anyone?"""

    session_id: str = Field(min_length=1, max_length=128)
    paths: list[str] = Field(min_length=1)
    repo: str | None = None


class KeyIn(Body):
    """``POST /v1/principals``: register (or replace) an agent's Ed25519 public key."""

    name: str = Field(min_length=1, max_length=200)
    public_key: str = Field(min_length=1, max_length=4000, description="PEM or OpenSSH text")
    roles: list[str] = Field(default_factory=list, max_length=6)


class KeyRemoveIn(Body):
    """``POST /v1/principals/remove``: remove an agent's key."""

    name: str = Field(min_length=1, max_length=200)
