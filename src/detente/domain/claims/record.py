"""The claim's wire record, declared once: the camelCase shape of API.md "Claims".

:func:`detente.domain.claims.wire.claim_to_wire` is the one function that produces it;
the projection tables store it, a ``409`` carries it as ``current``, and the HTTP API,
MCP and the CLI's ``--json`` answer with it. The application layer's
:mod:`detente.operations.wire.claims` derives its response models from these classes (a
stdlib ``TypedDict`` here keeps the domain free of third-party imports; pydantic on
Python 3.11 wants ``typing_extensions``' one, so the operations derive that).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

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


class ClaimRecord(TypedDict):
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
    deploymentResponsibility: str | None
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
