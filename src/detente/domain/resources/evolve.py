"""Folding ``resource.*`` events into the shared resources of the repository state."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from detente.clock import parse_time
from detente.domain import events as ev
from detente.domain.resources.model import (
    RECENT_ENDINGS,
    EndedHow,
    Ending,
    Grant,
    Resource,
    Waiter,
    resource_id,
)

__all__ = ["apply_resource_event"]


def _optional(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return str(value) if value else None


def _ended(resource: Resource, token: int, how: EndedHow, at: datetime) -> Resource:
    holders = tuple(g for g in resource.holders if g.fencing_token != token)
    ended = (*resource.ended, Ending(token, how, at))[-RECENT_ENDINGS:]
    return replace(resource, holders=holders, ended=ended)


def _changed(resource: Resource, event_type: str, data: dict[str, Any], at: datetime) -> Resource:
    match event_type:
        case ev.RESOURCE_DECLARED:
            return replace(resource, capacity=int(data["capacity"]))
        case ev.RESOURCE_GRANTED:
            grant = Grant(
                fencing_token=int(data["fencingToken"]),
                ticket=str(data["ticket"]),
                principal=str(data["principal"]),
                session_id=_optional(data, "sessionId"),
                claim_id=_optional(data, "claimId"),
                note=str(data.get("note") or ""),
                ttl_seconds=int(data["ttlSeconds"]),
                expires_at=parse_time(str(data["expiresAt"])),
                granted_at=at,
            )
            waiters = tuple(w for w in resource.waiters if w.ticket != grant.ticket)
            return replace(resource, holders=(*resource.holders, grant), waiters=waiters)
        case ev.RESOURCE_QUEUED:
            waiter = Waiter(
                ticket=str(data["ticket"]),
                principal=str(data["principal"]),
                session_id=_optional(data, "sessionId"),
                claim_id=_optional(data, "claimId"),
                note=str(data.get("note") or ""),
                ttl_seconds=int(data["ttlSeconds"]),
                queued_at=at,
            )
            return replace(resource, waiters=(*resource.waiters, waiter))
        case ev.RESOURCE_RENEWED:
            token = int(data["fencingToken"])
            renewed = tuple(
                replace(
                    g,
                    lease_revision=int(data["leaseRevision"]),
                    ttl_seconds=int(data["ttlSeconds"]),
                    expires_at=parse_time(str(data["expiresAt"])),
                )
                if g.fencing_token == token
                else g
                for g in resource.holders
            )
            return replace(resource, holders=renewed)
        case ev.RESOURCE_RELEASED:
            return _ended(resource, int(data["fencingToken"]), "released", at)
        case ev.RESOURCE_EXPIRED:
            return _ended(resource, int(data["fencingToken"]), "expired", at)
        case ev.RESOURCE_LEFT_QUEUE:
            ticket = str(data["ticket"])
            left = tuple(w for w in resource.waiters if w.ticket != ticket)
            return replace(resource, waiters=left)
        case ev.RESOURCE_NUMBER_ISSUED:
            return replace(resource, last_number=max(resource.last_number, int(data["number"])))
    return resource


def apply_resource_event(
    resources: dict[str, Resource],
    repo: str,
    event_type: str,
    data: dict[str, Any],
    *,
    at: datetime,
    event_id: str,
) -> int:
    """Fold one ``resource.*`` event into ``resources`` (updated in place).

    Args:
        resources: the repository's resources by id (``<repo>:<name>``).
        repo: the repository name.
        event_type: a ``resource.*`` type (unknown ones only count as a revision).
        data: the event payload (camelCase; every payload names its ``resource``).
        at: when the event was recorded (UTC).
        event_id: the event's id.

    Returns:
        The fencing token the event granted (0 when it granted none): the repository's
        counter must never hand it out again.
    """
    name = str(data["resource"])
    key = resource_id(repo, name)
    old = resources.get(key)
    if old is None:
        old = Resource(
            id=key,
            repo=repo,
            name=name,
            capacity=int(data.get("capacity", 1)),
            revision=0,
            holders=(),
            waiters=(),
            last_number=0,
            ended=(),
            created_at=at,
            updated_at=at,
        )
    new = _changed(old, event_type, data, at)
    resources[key] = replace(new, revision=old.revision + 1, updated_at=at, last_event_id=event_id)
    return int(data["fencingToken"]) if event_type == ev.RESOURCE_GRANTED else 0
