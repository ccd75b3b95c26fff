"""The agent command: register (or refresh) a session."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RegisterAgent:
    """Register (or renew) a session (API.md ``POST /v1/agents``). ``ttl_seconds`` > 0."""

    repo: str
    session_id: str
    agent_name: str
    ttl_seconds: int
    intent: str = ""
    branch: str | None = None
    worktree: str | None = None


@dataclass(frozen=True)
class RecordNotices:
    """A receipt of a session's notices (``POST /v1/agents/{sessionId}/notices``):
    ``receipt`` ``delivered`` (the hook put them before the agent) or ``seen`` (the agent
    acted after them), up to the global sequence number ``up_to``."""

    session_id: str
    receipt: str
    up_to: int
