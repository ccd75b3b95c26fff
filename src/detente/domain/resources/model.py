"""Shared resources: counted leases on things that are not files.

A resource (``build`` with two slots, ``db:test``, ``port:5432``, ``migrations``,
``deploy:staging``) is a record of the stream ``resource/<repo>:<name>``. It has a
``capacity`` (how many may hold it at once), its current grants (each with a fencing
token from the repository's one monotonic counter, a lease revision and an absolute
deadline), the requests waiting in line for a slot (first come, first granted), and a
counter that hands out the next number exactly once (migration numbers).

Everything here is folded from the log (:mod:`.evolve`); the decisions are
:mod:`.decide`. Whether a grant is live is never stored: the server's sweep expires a
grant whose deadline passed with a ``resource.expired`` event, as it expires claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from detente.clock import format_time
from detente.errors import ValidationError

__all__ = [
    "MAX_CAPACITY",
    "RECENT_ENDINGS",
    "RESOURCE_KIND",
    "Ending",
    "Grant",
    "Resource",
    "Waiter",
    "check_resource_name",
    "number_label",
    "resource_id",
    "resource_subject",
    "resource_to_wire",
]

#: The record kind (projection rows, stream prefix).
RESOURCE_KIND = "resource"

#: The largest capacity a resource may declare.
MAX_CAPACITY = 1000

#: How many ended grants a resource remembers (to tell ``lease_expired`` from a stale token).
RECENT_ENDINGS = 16

_NAME = re.compile(r"^[a-z0-9][a-z0-9._:-]{0,62}$")


def check_resource_name(name: str, fld: str = "name") -> str:
    """The resource name, or ``validation_error`` naming ``fld``.

    A name is 1-63 characters: lower-case letters, digits and ``. _ : -``, starting with
    a letter or digit (``build``, ``db:test``, ``port:5432``, ``deploy:staging``).
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValidationError(
            f"resource name {name!r} must be 1-63 characters of lower-case letters, digits "
            "and . _ : - (starting with a letter or digit), e.g. build, db:test, port:5432",
            field=fld,
        )
    return name


def resource_id(repo: str, name: str) -> str:
    """The record id (and stream suffix) of resource ``name`` of ``repo``."""
    return f"{repo}:{name}"


def resource_subject(repo: str, name: str) -> str:
    """The stream of a resource: ``resource/<repo>:<name>``."""
    return f"{RESOURCE_KIND}/{resource_id(repo, name)}"


def number_label(number: int) -> str:
    """A counter's number as a migration prefix: at least four digits (``42`` -> ``0042``)."""
    return f"{number:04d}"


@dataclass(frozen=True)
class Grant:
    """A slot held.

    Attributes:
        fencing_token: the grant's token (the repository's monotonic counter); every
            renewal and release presents it.
        ticket: the request's id (``tkt_...``), the same whether granted at once or after
            waiting in line.
        principal: who asked (only it, or an admin, renews or releases the grant).
        session_id / claim_id / note: what the holder said it holds the slot for.
        ttl_seconds: the lease's TTL, seconds.
        expires_at: absolute deadline (UTC); the sweep expires the grant from then on.
        granted_at: when the slot was granted (UTC).
        lease_revision: 1 at the grant, one more per renewal (the renewal's CAS value).
    """

    fencing_token: int
    ticket: str
    principal: str
    session_id: str | None
    claim_id: str | None
    note: str
    ttl_seconds: int
    expires_at: datetime
    granted_at: datetime
    lease_revision: int = 1


@dataclass(frozen=True)
class Waiter:
    """A request waiting in line for a slot (granted in arrival order)."""

    ticket: str
    principal: str
    session_id: str | None
    claim_id: str | None
    note: str
    ttl_seconds: int
    queued_at: datetime


EndedHow = Literal["released", "expired"]


@dataclass(frozen=True)
class Ending:
    """A grant that ended: its token, how and when."""

    fencing_token: int
    how: EndedHow
    at: datetime


@dataclass(frozen=True)
class Resource:
    """A shared resource of one repository.

    Attributes:
        id: ``<repo>:<name>``.
        repo / name: the repository and the resource's name.
        capacity: how many grants may be live at once (1..:data:`MAX_CAPACITY`).
        revision: events applied to the resource's stream.
        holders: the live grants, in grant order.
        waiters: the requests in line, first come first.
        last_number: the last number the counter handed out (0: none yet).
        ended: the last :data:`RECENT_ENDINGS` grants that ended, newest last.
        created_at / updated_at: first and last event (UTC).
        last_event_id: the id of the last event.
    """

    id: str
    repo: str
    name: str
    capacity: int
    revision: int
    holders: tuple[Grant, ...]
    waiters: tuple[Waiter, ...]
    last_number: int
    ended: tuple[Ending, ...]
    created_at: datetime
    updated_at: datetime
    last_event_id: str | None = None

    @property
    def free(self) -> int:
        """Slots free now (0 when full, or when a smaller capacity left it over-full)."""
        return max(0, self.capacity - len(self.holders))

    def holder(self, token: int) -> Grant | None:
        """The live grant with fencing token ``token``, if any."""
        return next((g for g in self.holders if g.fencing_token == token), None)

    def waiter(self, ticket: str) -> Waiter | None:
        """The request ``ticket`` while it waits in line, if it does."""
        return next((w for w in self.waiters if w.ticket == ticket), None)

    def ending(self, token: int) -> Ending | None:
        """How grant ``token`` ended, if it is among the recent endings."""
        return next((e for e in self.ended if e.fencing_token == token), None)


def _grant_to_wire(g: Grant) -> dict[str, Any]:
    return {
        "fencingToken": g.fencing_token,
        "ticket": g.ticket,
        "principal": g.principal,
        "sessionId": g.session_id,
        "claimId": g.claim_id,
        "note": g.note,
        "ttlSeconds": g.ttl_seconds,
        "expiresAt": format_time(g.expires_at),
        "grantedAt": format_time(g.granted_at),
        "leaseRevision": g.lease_revision,
    }


def _waiter_to_wire(w: Waiter, position: int) -> dict[str, Any]:
    return {
        "ticket": w.ticket,
        "position": position,
        "principal": w.principal,
        "sessionId": w.session_id,
        "claimId": w.claim_id,
        "note": w.note,
        "ttlSeconds": w.ttl_seconds,
        "queuedAt": format_time(w.queued_at),
    }


def grant_to_wire(grant: Grant) -> dict[str, Any]:
    """``{fencingToken, ticket, principal, sessionId, claimId, note, ttlSeconds,
    expiresAt, grantedAt, leaseRevision}``."""
    return _grant_to_wire(grant)


def resource_to_wire(resource: Resource) -> dict[str, Any]:
    """The resource's camelCase record (projection rows, a ``409``'s ``current``, answers).

    Returns:
        ``{id, repo, name, capacity, free, revision, holders[], waiters[{..., position}],
        lastNumber, recentlyEnded[{fencingToken, how, at}], createdAt, updatedAt,
        lastEventId}``; ``position`` counts from 1.
    """
    return {
        "id": resource.id,
        "repo": resource.repo,
        "name": resource.name,
        "capacity": resource.capacity,
        "free": resource.free,
        "revision": resource.revision,
        "holders": [_grant_to_wire(g) for g in resource.holders],
        "waiters": [_waiter_to_wire(w, i) for i, w in enumerate(resource.waiters, start=1)],
        "lastNumber": resource.last_number,
        "recentlyEnded": [
            {"fencingToken": e.fencing_token, "how": e.how, "at": format_time(e.at)}
            for e in resource.ended
        ],
        "createdAt": format_time(resource.created_at),
        "updatedAt": format_time(resource.updated_at),
        "lastEventId": resource.last_event_id,
    }
