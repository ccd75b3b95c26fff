"""Folding ``agent.*`` events into the agent sessions of the repository state."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from detente.clock import parse_time
from detente.domain.agents.model import AgentSession
from detente.domain.events import AGENT_NOTICES_RECEIVED, AGENT_REGISTERED


def agent_from_event(
    repo: str, data: dict[str, Any], at: datetime, event_id: str, old: AgentSession | None
) -> AgentSession:
    """The session after one ``agent.registered`` event (``old`` is the previous record).

    The session keeps the principal of its first registration (the event's recorded
    actor); the rule that only it re-registers the session is the application layer's."""
    actor = data.get("actor")
    registrant = actor.get("principal") if isinstance(actor, dict) else None
    return AgentSession(
        session_id=str(data["sessionId"]),
        repo=repo,
        agent_name=str(data["agentName"]),
        intent=str(data.get("intent") or ""),
        branch=data.get("branch"),
        worktree=data.get("worktree"),
        ttl_seconds=int(data["ttlSeconds"]),
        expires_at=parse_time(str(data["expiresAt"])),
        revision=old.revision + 1 if old is not None else 1,
        registered_at=old.registered_at if old is not None else at,
        updated_at=at,
        last_event_id=event_id,
        principal=(
            old.principal
            if old is not None
            else registrant
            if isinstance(registrant, str)
            else "local"
        ),
        delivered_up_to=old.delivered_up_to if old is not None else _from(data),
        seen_up_to=old.seen_up_to if old is not None else _from(data),
    )


def _from(data: dict[str, Any]) -> int:
    start = data.get("noticesFrom")
    return start if isinstance(start, int) else 0


def apply_agent_event(
    agents: dict[str, AgentSession],
    repo: str,
    event_type: str,
    data: dict[str, Any],
    *,
    at: datetime,
    event_id: str,
) -> None:
    """Fold one ``agent.*`` event into ``agents`` (unknown ``agent.*`` types are ignored).

    Args:
        agents: the repository's sessions by id, updated in place.
        repo: the repository name.
        event_type: ``agent.registered`` or ``agent.notices_received`` (others are
            ignored: forward compatibility).
        data: the event payload (camelCase).
        at: when the event was recorded (UTC).
        event_id: the event's id.
    """
    if event_type == AGENT_NOTICES_RECEIVED:
        old = agents.get(str(data["sessionId"]))
        if old is None:
            return
        up_to = int(data["upTo"])
        seen = data["receipt"] == "seen"
        agents[old.session_id] = replace(
            old,
            delivered_up_to=max(old.delivered_up_to, up_to),
            seen_up_to=max(old.seen_up_to, up_to) if seen else old.seen_up_to,
            revision=old.revision + 1,
            last_event_id=event_id,
        )
        return
    if event_type != AGENT_REGISTERED:
        return
    session_id = str(data["sessionId"])
    agents[session_id] = agent_from_event(repo, data, at, event_id, agents.get(session_id))
