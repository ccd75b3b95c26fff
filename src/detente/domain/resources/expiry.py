"""Expiry of shared resources' grants (pure): run by the command path before every
command and by the server's sweep, in the repository's serialised transaction, so a grant
expires exactly once whichever server sees its deadline first."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.policy import IdSource
from detente.domain.resources.grants import Tokens, event, promote
from detente.domain.resources.model import Resource
from detente.domain.state import RepoState

__all__ = ["decide_resource_expiry", "due_resources"]


def due_resources(state: RepoState, now: datetime) -> Iterator[Resource]:
    """The resources holding a grant whose deadline is at or before ``now``."""
    for resource in state.resources.values():
        if any(g.expires_at <= now for g in resource.holders):
            yield resource


def decide_resource_expiry(state: RepoState, now: datetime, ids: IdSource) -> list[ev.Event]:
    """``resource.expired`` for every grant past its deadline, each followed by the grants
    the freed slots let the waiters in line have (first come, first granted)."""
    tokens = Tokens(state)
    out: list[ev.Event] = []
    for resource in sorted(due_resources(state, now), key=lambda r: r.name):
        due = [g for g in resource.holders if g.expires_at <= now]
        for grant in due:
            out.append(
                event(
                    ids,
                    state.repo,
                    resource.name,
                    ev.RESOURCE_EXPIRED,
                    fencingToken=grant.fencing_token,
                    holder=grant.principal,
                    deadline=format_time(grant.expires_at),
                )
            )
        left = len(resource.holders) - len(due)
        out += promote(resource, left, resource.capacity, tokens, ids, now)
    return out
