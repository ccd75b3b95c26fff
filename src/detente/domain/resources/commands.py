"""The resource commands (API.md *(added)* "Shared resources")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Acquire:
    """Ask for a slot of resource ``name`` for ``ttl_seconds``.

    ``capacity`` declares the resource when it does not exist yet (default 1) and must
    match its capacity when it does (None: whatever it is). ``wait``: when every slot is
    held, queue (``resource.queued``) instead of ``resource_busy``. ``principal`` is the
    acting principal (filled by the service, never by a body).
    """

    repo: str
    name: str
    principal: str
    ttl_seconds: int
    capacity: int | None = None
    wait: bool = False
    session_id: str | None = None
    claim_id: str | None = None
    note: str = ""


@dataclass(frozen=True)
class Renew:
    """Heartbeat: extend grant ``fencing_token`` to ``now + ttl_seconds``, if its lease is
    still at ``expected_lease_revision``."""

    repo: str
    name: str
    fencing_token: int
    expected_lease_revision: int
    ttl_seconds: int


@dataclass(frozen=True)
class Release:
    """Give back grant ``fencing_token``, or leave the line (``ticket``): exactly one.

    ``expected_lease_revision`` (when given) must be the grant's; ``by`` is the acting
    principal (a release by another than the holder, an admin's, is recorded ``forced``).
    """

    repo: str
    name: str
    by: str
    fencing_token: int | None = None
    ticket: str | None = None
    expected_lease_revision: int | None = None


@dataclass(frozen=True)
class Declare:
    """Create resource ``name`` with ``capacity`` (``expected_revision`` 0) or change the
    capacity of an existing one (its current revision)."""

    repo: str
    name: str
    capacity: int
    expected_revision: int


@dataclass(frozen=True)
class NextNumber:
    """Take the counter's next number: ``max(last + 1, at_least)`` (``at_least`` None: 1)."""

    repo: str
    name: str
    at_least: int | None = None
