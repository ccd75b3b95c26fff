"""Request bodies of the shared resource routes (API.md *(added)* "Shared resources").

Validated by the HTTP routers and by the in-process client alike. The acting principal
is never a body field: the handlers pass it (a grant is its acquirer's).
"""

from __future__ import annotations

from pydantic import Field

from detente.domain.resources.commands import Acquire, Declare, NextNumber, Release, Renew
from detente.operations.body import Body

__all__ = [
    "ResourceAcquireIn",
    "ResourceDeclareIn",
    "ResourceNextIn",
    "ResourceReleaseIn",
    "ResourceRenewIn",
]


class ResourceAcquireIn(Body):
    """``POST /v1/resources/{name}/acquire``: a slot for ``ttlSeconds`` (renew it by
    heartbeat), or with ``wait`` a place in line when every slot is held. ``capacity``
    declares a resource not seen before (default 1) and must match an existing one's."""

    repo: str | None = None
    ttl_seconds: int = Field(default=300, strict=True)
    capacity: int | None = Field(default=None, strict=True)
    wait: bool = False
    session_id: str | None = Field(default=None, max_length=128)
    claim_id: str | None = Field(default=None, max_length=128)
    note: str = Field(default="", max_length=4000)

    def to_command(self, name: str, principal: str) -> Acquire:
        return Acquire(
            repo=self.repo or "",
            name=name,
            principal=principal,
            ttl_seconds=self.ttl_seconds,
            capacity=self.capacity,
            wait=self.wait,
            session_id=self.session_id,
            claim_id=self.claim_id,
            note=self.note,
        )


class ResourceRenewIn(Body):
    """``POST /v1/resources/{name}/renew``: heartbeat grant ``fencingToken``, whose lease
    the caller read at ``expectedLeaseRevision``."""

    repo: str | None = None
    fencing_token: int = Field(strict=True)
    expected_lease_revision: int = Field(strict=True)
    ttl_seconds: int = Field(default=300, strict=True)

    def to_command(self, name: str) -> Renew:
        return Renew(
            repo=self.repo or "",
            name=name,
            fencing_token=self.fencing_token,
            expected_lease_revision=self.expected_lease_revision,
            ttl_seconds=self.ttl_seconds,
        )


class ResourceReleaseIn(Body):
    """``POST /v1/resources/{name}/release``: give back grant ``fencingToken`` (with its
    ``expectedLeaseRevision`` when given), or leave the line with ``ticket``."""

    repo: str | None = None
    fencing_token: int | None = Field(default=None, strict=True)
    ticket: str | None = Field(default=None, min_length=1, max_length=128)
    expected_lease_revision: int | None = Field(default=None, strict=True)

    def to_command(self, name: str, by: str) -> Release:
        return Release(
            repo=self.repo or "",
            name=name,
            by=by,
            fencing_token=self.fencing_token,
            ticket=self.ticket,
            expected_lease_revision=self.expected_lease_revision,
        )


class ResourceDeclareIn(Body):
    """``POST /v1/resources/{name}/declare``: create with ``capacity`` (``expectedRevision``
    0) or change the capacity of the resource at ``expectedRevision``."""

    repo: str | None = None
    capacity: int = Field(strict=True)
    expected_revision: int = Field(strict=True)

    def to_command(self, name: str) -> Declare:
        return Declare(
            repo=self.repo or "",
            name=name,
            capacity=self.capacity,
            expected_revision=self.expected_revision,
        )


class ResourceNextIn(Body):
    """``POST /v1/resources/{name}/next``: the counter's next number, at least ``atLeast``."""

    repo: str | None = None
    at_least: int | None = Field(default=None, strict=True)

    def to_command(self, name: str) -> NextNumber:
        return NextNumber(repo=self.repo or "", name=name, at_least=self.at_least)
