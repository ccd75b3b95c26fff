"""Shared resources (API.md *(added)* "Shared resources")."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

from detente.operations.wire.record import Time, record

__all__ = [
    "Ending",
    "Grant",
    "NumberIssued",
    "Resource",
    "ResourceGrant",
    "ResourceList",
    "ResourceOut",
    "Waiter",
    "Waiting",
]


@record
class Grant(TypedDict):
    """A slot held: its fencing token (present it to renew or release), the request's
    ticket, who holds it and until when (``expiresAt``, absolute; renew by heartbeat)."""

    fencingToken: int
    ticket: str
    principal: str
    sessionId: str | None
    claimId: str | None
    note: str
    ttlSeconds: int
    expiresAt: Time
    grantedAt: Time
    leaseRevision: int


@record
class Waiter(TypedDict):
    """A request in line (``position`` from 1): granted in arrival order."""

    ticket: str
    position: int
    principal: str
    sessionId: str | None
    claimId: str | None
    note: str
    ttlSeconds: int
    queuedAt: Time


@record
class Ending(TypedDict):
    """A grant that ended recently, and how."""

    fencingToken: int
    how: Literal["released", "expired"]
    at: Time


@record
class Resource(TypedDict):
    """A shared resource: capacity, free slots, holders, waiters, the counter's last number."""

    id: str
    repo: str
    name: str
    capacity: int
    free: int
    revision: int
    holders: list[Grant]
    waiters: list[Waiter]
    lastNumber: int
    recentlyEnded: list[Ending]
    createdAt: Time
    updatedAt: Time
    lastEventId: str | None


@record
class Waiting(TypedDict):
    """The caller's place in line."""

    ticket: str
    position: int


@record
class ResourceGrant(TypedDict):
    """``{resource, grant, waiting}``: the caller's grant, or (null grant) its place in line."""

    resource: Resource
    grant: Grant | None
    waiting: Waiting | None


@record
class ResourceOut(TypedDict):
    """``{resource}``."""

    resource: Resource


@record
class ResourceList(TypedDict):
    """``{resources[]}``."""

    resources: list[Resource]


@record
class NumberIssued(TypedDict):
    """``{resource, number, label}``: the number handed out (once) and its four-digit label."""

    resource: Resource
    number: int
    label: str
