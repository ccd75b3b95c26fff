"""Claim records and the answers of the claim operations (API.md "Claims")."""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from detente.operations.wire.meetings import Meeting
from detente.operations.wire.record import ClaimStatus, Json, Time, record

__all__ = [
    "Abandonment",
    "AgentRef",
    "Claim",
    "ClaimList",
    "ClaimOut",
    "ClaimView",
    "ContractChange",
    "Lease",
    "MeetingView",
    "MemoryImpact",
    "Overlap",
    "OverlapTarget",
    "WriteCheck",
]


@record
class AgentRef(TypedDict):
    """Who holds a claim: a stable agent id, a display name and the session."""

    id: str
    name: str
    sessionId: str | None


@record
class Lease(TypedDict):
    """A claim's lease: liveness only (``expiresAt`` by the server's clock)."""

    id: str
    revision: int
    ttlSeconds: int
    expiresAt: Time


@record
class ContractChange(TypedDict):
    """An expected contract change; overlap compares ``area``."""

    type: str | None
    area: str
    change: str | None


@record
class MemoryImpact(TypedDict):
    """A memory file the claim will change (``mode`` ``section`` or ``append``)."""

    path: str
    mode: str
    sections: list[str]


@record
class Abandonment(TypedDict):
    """What an abandoned claim left behind."""

    headCommit: str | None
    diffSummary: dict[str, Json]
    memoryState: dict[str, Json]
    reason: str | None


@record
class Claim(TypedDict):
    """A claim record (API.md "Claims"): intent, lease, revision, fencing token.

    ``expectedContractChanges`` items are a plain area string or a ``ContractChange``;
    ``testResponsibility`` is a list of test names or ``{kind: [names]}``.
    """

    id: str
    repo: str
    objective: str
    status: ClaimStatus
    revision: int
    agent: AgentRef
    baseCommit: str
    branch: str | None
    worktree: str | None
    paths: list[str]
    pendingPaths: list[str]
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


@record
class OverlapTarget(TypedDict):
    """Where two claims meet: my pattern, theirs, and a path both match (None: the
    bounded search could not decide, then ``undecided`` is true)."""

    mine: str
    theirs: str
    witness: str | None
    undecided: NotRequired[bool]


@record
class Overlap(TypedDict):
    """One overlap report entry per other claim (API.md), its targets inside."""

    claimId: str
    agent: AgentRef
    kind: Literal["path", "module", "symbol", "contract", "memory", "semantic"]
    kinds: list[str]
    severity: Literal["blocking", "advisory", "potential"]
    theirStatus: ClaimStatus
    targets: list[OverlapTarget]
    reason: str


@record
class ClaimOut(TypedDict):
    """``{claim}``: the claim after the operation."""

    claim: Claim


@record
class ClaimView(TypedDict):
    """A claim with its live overlap report and its meetings.

    ``meeting`` is the newest open meeting (null when none); ``work`` is what the
    claim's worktree holds now (``GET /v1/claims/{id}`` only, else null);
    ``semanticOverlaps`` are advisory ``kind: semantic`` entries.
    """

    claim: Claim
    overlaps: list[Overlap]
    meeting: Meeting | None
    meetings: list[Meeting]
    work: dict[str, Json] | None
    semanticOverlaps: list[Overlap]


@record
class ClaimList(TypedDict):
    """``{claims[], nextCursor}``: ``nextCursor`` names the next page of ``GET /v1/claims``
    (null on the last page; absent from a session's claims)."""

    claims: list[Claim]
    nextCursor: NotRequired[str | None]


@record
class WriteCheck(TypedDict):
    """The claim may write ``paths`` now (a refusal is a 409 instead); ``limitedTo``
    (only when some file is held through symbols alone): ``file -> symbols`` the write
    of that file must stay inside."""

    ok: bool
    claimId: str
    paths: list[str]
    limitedTo: NotRequired[dict[str, list[str]]]


@record
class MeetingView(TypedDict):
    """``{meeting, claims[]}``: a meeting and its participants' current records."""

    meeting: Meeting
    claims: list[Claim]
