"""Handing out slots (pure): the repository's fencing counter within one decision, the
``resource.*`` event of a stream, and the grants that freed slots give the waiters in line
(first come, first granted). Shared by the decisions and the expiry."""

from __future__ import annotations

from datetime import datetime, timedelta

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.policy import IdSource
from detente.domain.resources.model import Resource, Waiter, resource_subject
from detente.domain.state import RepoState

__all__ = ["Tokens", "event", "grant_event", "promote"]


class Tokens:
    """The repository's fencing counter within one decision (several grants draw from it)."""

    def __init__(self, state: RepoState) -> None:
        self.last = state.claims.last_fencing_token

    def next(self) -> int:
        self.last += 1
        return self.last


def event(ids: IdSource, repo: str, name: str, event_type: str, **data: object) -> ev.Event:
    """An event on resource ``name``'s stream; ``data`` follows ``resource``."""
    return ev.stream_event(ids, resource_subject(repo, name), event_type, resource=name, **data)


def grant_event(
    ids: IdSource,
    repo: str,
    name: str,
    waiter: Waiter,
    token: int,
    now: datetime,
    *,
    waited: bool = False,
) -> ev.Event:
    """``resource.granted``: ``waiter``'s request gets fencing token ``token`` and a lease
    of its TTL from ``now`` (the moment of the grant, not of the request). A request
    served from the line carries ``waited: true``: its agent is woken
    (:mod:`detente.domain.agents.notices`)."""
    served = {"waited": True} if waited else {}
    return event(
        ids,
        repo,
        name,
        ev.RESOURCE_GRANTED,
        ticket=waiter.ticket,
        fencingToken=token,
        principal=waiter.principal,
        sessionId=waiter.session_id,
        claimId=waiter.claim_id,
        note=waiter.note,
        ttlSeconds=waiter.ttl_seconds,
        expiresAt=format_time(now + timedelta(seconds=waiter.ttl_seconds)),
        **served,
    )


def promote(
    resource: Resource,
    holders: int,
    capacity: int,
    tokens: Tokens,
    ids: IdSource,
    now: datetime,
) -> list[ev.Event]:
    """Grants for the first waiters in line while slots are free (``holders`` remain)."""
    free = max(0, capacity - holders)
    return [
        grant_event(ids, resource.repo, resource.name, w, tokens.next(), now, waited=True)
        for w in resource.waiters[:free]
    ]
