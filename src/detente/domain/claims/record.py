"""The claim's wire record, declared once: the camelCase shape of API.md "Claims".

:func:`claim_to_wire` is the one function that produces it (the projection tables store
it, ``audit verify`` compares it against a full replay, a ``409`` carries it as
``current``, and the HTTP API, MCP and the CLI's ``--json`` answer with it), and
:func:`claim_from_announcement` the record a ``claim.announced`` event (the seed's part
of the same shape) opens. A claim field is spelled here once for each direction.

The application layer's :mod:`detente.operations.wire.claims` derives its response
models from these classes (a stdlib ``TypedDict`` here keeps the domain free of
third-party imports; pydantic on Python 3.11 wants ``typing_extensions``' one, so the
operations derive that).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, TypedDict, get_args

from detente.clock import format_time, parse_time
from detente.domain.claims.declared import DeclaredRecord, declared_from_wire, declared_to_wire
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.claims.model import Lease as LeaseOf
from detente.domain.claims.wire import (
    abandonment_to_wire,
    agent_from_wire,
    agent_to_wire,
    contract_from_wire,
    contract_to_wire,
    memory_impact_from_wire,
    memory_impact_to_wire,
    semantic_from_wire,
    tests_to_wire,
)

__all__ = [
    "Abandonment",
    "AgentRef",
    "ClaimRecord",
    "ContractChange",
    "Json",
    "Lease",
    "MemoryImpact",
    "StatusName",
    "Time",
    "claim_from_announcement",
    "claim_to_wire",
    "lease_to_wire",
]

#: An RFC 3339 UTC time string, e.g. ``2026-11-30T14:05:00Z``.
Time = str

#: Any JSON value (a member whose shape the operation that wrote it decides).
Json = Any

#: The twelve claim statuses of API.md.
StatusName = Literal[
    "draft",
    "announced",
    "negotiating",
    "active",
    "blocked",
    "suspended",
    "ready_for_review",
    "integrated",
    "completed",
    "abandoned",
    "expired",
    "taken_over",
]


class AgentRef(TypedDict):
    """Who holds a claim: a stable agent id, a display name and the session."""

    id: str
    name: str
    sessionId: str | None


class Lease(TypedDict):
    """A claim's lease: liveness only (``expiresAt`` by the server's clock)."""

    id: str
    revision: int
    ttlSeconds: int
    expiresAt: Time


class ContractChange(TypedDict):
    """An expected contract change; overlap compares ``area``."""

    type: str | None
    area: str
    change: str | None


class MemoryImpact(TypedDict):
    """A memory file the claim will change (``mode`` ``section`` or ``append``)."""

    path: str
    mode: str
    sections: list[str]


class Abandonment(TypedDict):
    """What an abandoned claim left behind."""

    headCommit: str | None
    diffSummary: dict[str, Json]
    memoryState: dict[str, Json]
    reason: str | None


class ClaimRecord(DeclaredRecord):
    """A claim record (API.md "Claims"): intent, lease, revision, fencing token.

    ``expectedContractChanges`` items are a plain area string or a ``ContractChange``;
    ``testResponsibility`` is a list of test names or ``{kind: [names]}``.
    """

    id: str
    repo: str
    objective: str
    status: StatusName
    revision: int
    agent: AgentRef
    principal: str
    baseCommit: str
    branch: str | None
    worktree: str | None
    paths: list[str]
    pendingPaths: list[str]
    carveOuts: dict[str, list[str]]
    modules: list[str]
    symbols: list[str]
    expectedContractChanges: list[str | ContractChange]
    testResponsibility: list[str] | dict[str, list[str]]
    memoryImpacts: list[MemoryImpact]
    lease: Lease
    fencingToken: int
    meetingIds: list[str]
    statusReason: str | None
    abandonment: Abandonment | None
    lastEventId: str | None
    advisory: bool
    granted: bool
    takeoverOf: dict[str, Json] | None
    successorId: str | None
    evidence: dict[str, Json] | None
    integration: dict[str, Json] | None
    createdAt: Time
    updatedAt: Time


#: A status's wire name (every :class:`ClaimStatus` value is one of ``StatusName``).
_STATUS_NAMES: dict[str, StatusName] = {name: name for name in get_args(StatusName)}
assert set(_STATUS_NAMES) == {s.value for s in ClaimStatus}


def lease_to_wire(lease: LeaseOf) -> Lease:
    """A claim's lease as the record's ``lease`` member."""
    return {
        "id": lease.id,
        "revision": lease.revision,
        "ttlSeconds": lease.ttl_seconds,
        "expiresAt": format_time(lease.expires_at),
    }


def claim_to_wire(claim: Claim) -> ClaimRecord:
    """A claim as the API.md record (:class:`~detente.domain.claims.record.ClaimRecord`):
    the one function that produces it, for the projections, a ``409``'s ``current``
    and every answer."""
    return {
        "id": claim.id,
        "repo": claim.repo,
        "objective": claim.objective,
        "status": _STATUS_NAMES[claim.status.value],
        "revision": claim.revision,
        "agent": agent_to_wire(claim.agent),
        "principal": claim.principal,
        "baseCommit": claim.base_commit,
        "branch": claim.branch,
        "worktree": claim.worktree,
        "paths": list(claim.paths),
        "pendingPaths": list(claim.pending_paths),
        "carveOuts": {p: list(cuts) for p, cuts in claim.carve_outs},
        "modules": list(claim.modules),
        "symbols": list(claim.symbols),
        "expectedContractChanges": [contract_to_wire(c) for c in claim.expected_contract_changes],
        "testResponsibility": tests_to_wire(claim),
        **declared_to_wire(claim.declared),
        "memoryImpacts": [memory_impact_to_wire(m) for m in claim.memory_impacts],
        "lease": lease_to_wire(claim.lease),
        "fencingToken": claim.fencing_token,
        "meetingIds": list(claim.meeting_ids),
        "statusReason": claim.status_reason,
        "abandonment": abandonment_to_wire(claim.abandonment) if claim.abandonment else None,
        "lastEventId": claim.last_event_id,
        "advisory": claim.advisory,
        "granted": claim.granted,
        "takeoverOf": claim.takeover,
        "successorId": claim.successor_id,
        "evidence": claim.evidence,
        "integration": claim.integration,
        "createdAt": format_time(claim.created_at),
        "updatedAt": format_time(claim.updated_at),
    }


def _test_names(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, dict):
        # By kind name: stores may keep JSON objects with sorted keys.
        return tuple(dict.fromkeys(str(n) for _, names in sorted(raw.items()) for n in names))
    return tuple(str(n) for n in raw)


def _test_plan(raw: Any) -> dict[str, tuple[str, ...]] | None:
    if not isinstance(raw, dict):
        return None
    return {str(kind): tuple(str(n) for n in names) for kind, names in raw.items()}


def _principal(actor: Any) -> str:
    """The principal that announced a claim (the event's recorded actor; ``local`` before)."""
    if isinstance(actor, dict) and isinstance(actor.get("principal"), str):
        return str(actor["principal"])
    return "local"


def claim_from_announcement(
    repo: str, data: dict[str, Any], at: datetime, event_id: str, claims: Mapping[str, Claim]
) -> Claim:
    """The record a ``claim.announced`` event opens (its data is the seed's part of the
    wire record, camelCase); ``claims`` interns the ids of similar claims."""
    lease = data["lease"]
    return Claim(
        id=str(data["claimId"]),
        repo=repo,
        objective=str(data["objective"]),
        status=ClaimStatus(data.get("status", ClaimStatus.ANNOUNCED.value)),
        revision=1,
        agent=agent_from_wire(data["agent"]),
        base_commit=sys.intern(str(data["baseCommit"])),  # most claims share a few
        branch=data.get("branch"),
        worktree=data.get("worktree"),
        paths=tuple(data["paths"]),
        modules=tuple(data.get("modules", ())),
        symbols=tuple(data.get("symbols", ())),
        expected_contract_changes=tuple(
            contract_from_wire(c) for c in data.get("expectedContractChanges", ())
        ),
        test_responsibility=_test_names(data.get("testResponsibility", ())),
        test_plan=_test_plan(data.get("testResponsibility")),
        declared=declared_from_wire(data),
        memory_impacts=tuple(memory_impact_from_wire(m) for m in data.get("memoryImpacts", ())),
        lease=LeaseOf(
            id=str(lease["id"]),
            revision=int(lease["revision"]),
            ttl_seconds=int(lease["ttlSeconds"]),
            expires_at=parse_time(str(lease["expiresAt"])),
        ),
        fencing_token=int(data["fencingToken"]),
        created_at=at,
        updated_at=at,
        last_event_id=event_id,
        advisory=bool(data.get("advisory", False)),
        principal=sys.intern(_principal(data.get("actor"))),
        takeover=data.get("takeoverOf"),
        semantic=semantic_from_wire(data.get("semantic"), claims),
        carve_outs=_announced_carve_outs(data),
    )


def _announced_carve_outs(data: dict[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A takeover successor's inherited carve-outs (``carveOuts`` of its announcement)."""
    raw = data.get("carveOuts")
    if not isinstance(raw, dict):
        return ()
    held = set(data["paths"])
    return tuple(
        (str(p), tuple(str(c) for c in cuts))
        for p, cuts in sorted(raw.items())
        if p in held and cuts
    )
