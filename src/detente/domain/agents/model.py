"""Agent sessions: the advisory registry of who works where, with what intent.

An agent session is a record of the stream ``agent/<sessionId>``, created and renewed by
``agent.registered`` v1 (each registration carries the whole record: name, intent,
branch, worktree, TTL and the absolute deadline ``expiresAt``). Whether a session is
``active`` or ``departed`` is never stored: it is computed from the server's clock at
read time (``departed`` once ``expiresAt`` has passed), so a restart renews nothing and
the projection stays a pure function of the log.

This module holds the record and its wire shape; the fold is :mod:`.evolve`, the
registration decision :mod:`.decide`, the advisory view :mod:`.advisory`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from detente.clock import format_time

__all__ = [
    "AGENT_KIND",
    "AgentSession",
    "AgentStatus",
    "agent_status",
    "agent_subject",
    "agent_to_wire",
]

#: The record kind (projection rows, stream prefix).
AGENT_KIND = "agent"

AgentStatus = Literal["active", "departed"]


@dataclass(frozen=True)
class AgentSession:
    """One registered agent session (API.md "Agents and readiness").

    Attributes:
        session_id: the client-chosen session id (the record id).
        repo: repository the session works in.
        agent_name: display name (``claude-code``, ``codex``, a person).
        intent: what the session says it is doing (free text, may be empty).
        branch / worktree: where it works, if it said so.
        ttl_seconds: the TTL of the last registration, in seconds.
        expires_at: absolute deadline (UTC); the session is ``departed`` from then on.
        revision: events applied to the session's stream.
        registered_at / updated_at: first and last registration (UTC).
        last_event_id: id of the last ``agent.registered`` event.
        principal: the principal that first registered the session (its owner: only it,
            or an admin, renews or re-registers it); ``local`` for a log from before
            actors were recorded.
        delivered_up_to: the global sequence number up to which the session's notices
            were delivered (put before the agent by a hook); starts where the session
            first registered.
        seen_up_to: up to which the agent acted after them (its next hook call).
    """

    session_id: str
    repo: str
    agent_name: str
    intent: str
    branch: str | None
    worktree: str | None
    ttl_seconds: int
    expires_at: datetime
    revision: int
    registered_at: datetime
    updated_at: datetime
    last_event_id: str | None = None
    principal: str = "local"
    delivered_up_to: int = 0
    seen_up_to: int = 0


def agent_subject(session_id: str) -> str:
    """The stream of a session: ``agent/<sessionId>``."""
    return f"{AGENT_KIND}/{session_id}"


def agent_status(session: AgentSession, now: datetime) -> AgentStatus:
    """``active`` until the deadline, ``departed`` at and after it (server clock)."""
    return "active" if now < session.expires_at else "departed"


def agent_to_wire(session: AgentSession, now: datetime | None = None) -> dict[str, Any]:
    """The session's camelCase record.

    Args:
        session: the record.
        now: the server's time; when given, ``status`` (``active``/``departed``) is added.
            The stored projection row is written without it (it depends on the clock).

    Returns:
        ``{sessionId, agentName, status?, intent, branch, worktree, ttlSeconds, expiresAt,
        repo, revision, registeredAt, updatedAt, lastEventId, principal, notices
        {deliveredUpTo, seenUpTo}}``.
    """
    body: dict[str, Any] = {"sessionId": session.session_id, "agentName": session.agent_name}
    if now is not None:
        body["status"] = agent_status(session, now)
    body.update(
        {
            "intent": session.intent,
            "branch": session.branch,
            "worktree": session.worktree,
            "ttlSeconds": session.ttl_seconds,
            "expiresAt": format_time(session.expires_at),
            "repo": session.repo,
            "revision": session.revision,
            "registeredAt": format_time(session.registered_at),
            "updatedAt": format_time(session.updated_at),
            "lastEventId": session.last_event_id,
            "principal": session.principal,
            "notices": {
                "deliveredUpTo": session.delivered_up_to,
                "seenUpTo": session.seen_up_to,
            },
        }
    )
    return body
