"""The agent operations: register (or renew) a session, list and read sessions, a
session's claims, and readiness."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from detente.operations import authorize as who
from detente.operations.declaration import Operation

#: Reads need the ``read`` role (held by every principal holding a role, unless
#: ``[roles] read`` lists its holders; see :mod:`detente.security.authn`).
READ = who.role("read")

if TYPE_CHECKING:
    from detente.domain.agents.commands import RecordNotices, RegisterAgent
    from detente.operations import agent_bodies as ab
    from detente.operations import wire
    from detente.service import Service

__all__ = ["OPERATIONS"]


def _claims(claims: Any) -> list[wire.Claim]:
    from detente.domain.claims.record import claim_to_wire  # a remote client never needs it

    return [claim_to_wire(c) for c in claims]


def register_agent(service: Service, body: ab.AgentIn) -> wire.AgentOut:
    """Register a session or renew it (``expiresAt = now + ttlSeconds``): ``{agent}``."""
    return register_agent_command(service, body.to_command())


def register_agent_command(service: Service, command: RegisterAgent) -> wire.AgentOut:
    """:func:`register_agent` of a command built from typed values (the in-process
    client's ``register_agent_typed``, run as :data:`REGISTER_AGENT`: its rule and limit
    without the request model; the decision checks every field)."""
    view = service.agents.register_agent(command)
    return {"agent": cast("wire.AgentSession", view.to_wire())}


def list_agents(
    service: Service, repo: str | None = None, status: str | None = None
) -> wire.AgentList:
    """Sessions with ``status`` active|departed computed from the server clock."""
    views = service.agents.list_agents(repo=repo, status=status)
    return {"agents": [cast("wire.AgentSession", a.to_wire()) for a in views]}


def get_agent(service: Service, session_id: str) -> wire.AgentOut:
    """One session: ``{agent}``; ``404 not_found`` when never registered."""
    view = service.agents.get_agent(session_id)
    return {"agent": cast("wire.AgentSession", view.to_wire())}


def session_claims(service: Service, session_id: str, repo: str | None = None) -> wire.ClaimList:
    """``{claims[]}``: the session's claims that still hold their targets, oldest first;
    only the acting principal's (a session id is the client's choice: another principal
    naming it sees none of them, and no hook works under a claim that is not its own)."""
    from detente.security.identity import current_principal  # the server's side only

    acting = current_principal().name
    found = service.agents.session_claims(session_id, repo=repo, principal=acting)
    return {"claims": _claims(found)}


def session_notices(
    service: Service, session_id: str, repo: str | None = None
) -> wire.SessionNotices:
    """``{notices[], scannedUpTo, receipts}``: what woke the session (its claim's turn
    came, a room of its claims changed) since its notices were last delivered; only the
    acting principal's claims of it."""
    from detente.security.identity import current_principal

    found = service.agents.notices(session_id, repo=repo, principal=current_principal().name)
    return cast("wire.SessionNotices", found.to_wire())


def record_notices(service: Service, session_id: str, body: ab.NoticesIn) -> wire.AgentOut:
    """Record a receipt (``delivered`` or ``seen`` up to ``upTo``): ``{agent}`` with its
    ``notices {deliveredUpTo, seenUpTo}``."""
    return record_notices_command(service, session_id, body.to_command(session_id))


def record_notices_command(
    service: Service, session_id: str, command: RecordNotices
) -> wire.AgentOut:
    """:func:`record_notices` from typed values (the in-process client's
    ``record_notices_typed``; ``session_id`` is the path's, as the rule reads it)."""
    view = service.agents.record_notices(command)
    return {"agent": cast("wire.AgentSession", view.to_wire())}


def readiness(service: Service, body: ab.ReadinessIn) -> wire.Readiness:
    """``{readiness: ready|caution, overlappingClaims[]}``; never refuses on overlap."""
    answer = service.agents.readiness(body.session_id, body.paths, repo=body.repo)
    return cast("wire.Readiness", answer.to_wire())


def list_keys(service: Service) -> wire.KeyList:
    """``{principals[]}``: the registered agent keys (``--auth keys``), by name."""
    keys = service.principals.list_keys()
    return {"principals": [cast("wire.KeyRecord", k.to_wire()) for k in keys]}


def register_key(service: Service, body: ab.KeyIn) -> wire.KeyOut:
    """Register (or replace) a key; recorded in the log (``principal.key_registered``)
    before the registry file changes: ``{principal}``."""
    entry = service.principals.register_key(body.name, body.public_key.encode(), tuple(body.roles))
    return {"principal": cast("wire.KeyRecord", entry.to_wire())}


def remove_key(service: Service, body: ab.KeyRemoveIn) -> wire.KeyOut:
    """Remove a key; recorded in the log (``principal.key_removed``) before the registry
    file changes; its signed requests are refused from then on. ``404 not_found``."""
    entry = service.principals.remove_key(body.name)
    return {"principal": cast("wire.KeyRecord", entry.to_wire())}


REGISTER_AGENT: Operation[wire.AgentOut] = Operation(
    "register_agent",
    "POST",
    "/v1/agents",
    register_agent,
    rule=who.register_agent,
    limit="agent-register",
    status_code=201,
)
LIST_AGENTS: Operation[wire.AgentList] = Operation(
    "list_agents", "GET", "/v1/agents", list_agents, rule=READ
)
GET_AGENT: Operation[wire.AgentOut] = Operation(
    "get_agent", "GET", "/v1/agents/{session_id}", get_agent, rule=READ
)
SESSION_CLAIMS: Operation[wire.ClaimList] = Operation(
    "session_claims",
    "GET",
    "/v1/agents/{session_id}/claims",
    session_claims,
    rule=who.session_reader,
)
SESSION_NOTICES: Operation[wire.SessionNotices] = Operation(
    "session_notices",
    "GET",
    "/v1/agents/{session_id}/notices",
    session_notices,
    rule=who.session_reader,
)
RECORD_NOTICES: Operation[wire.AgentOut] = Operation(
    "record_notices",
    "POST",
    "/v1/agents/{session_id}/notices",
    record_notices,
    rule=who.session_writer,
)
READINESS: Operation[wire.Readiness] = Operation(
    "readiness", "POST", "/v1/readiness", readiness, rule=who.role("claim")
)

LIST_KEYS: Operation[wire.KeyList] = Operation(
    "list_keys", "GET", "/v1/principals", list_keys, rule=READ
)
REGISTER_KEY: Operation[wire.KeyOut] = Operation(
    "register_key", "POST", "/v1/principals", register_key, rule=who.role("admin")
)
REMOVE_KEY: Operation[wire.KeyOut] = Operation(
    "remove_key", "POST", "/v1/principals/remove", remove_key, rule=who.role("admin")
)

#: In the order the HTTP API registers them.
OPERATIONS: tuple[Operation[Any], ...] = (
    REGISTER_AGENT,
    LIST_AGENTS,
    GET_AGENT,
    SESSION_CLAIMS,
    SESSION_NOTICES,
    RECORD_NOTICES,
    READINESS,
    LIST_KEYS,
    REGISTER_KEY,
    REMOVE_KEY,
)
