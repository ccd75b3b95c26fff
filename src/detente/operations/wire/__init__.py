"""The API's answers as typed records: one TypedDict per shape of API.md v1.

The keys are the wire's camelCase names, so a decoded JSON answer *is* the record: the
client returns the decoded object typed with these (no conversion, no pydantic import),
and the HTTP routes declare them as their response models, which makes FastAPI validate
every answer against them and document them in ``/openapi.json``. Every record is open
(:func:`~detente.operations.wire.record.record`): API.md lets a server add members.

Modules by area: :mod:`.claims`, :mod:`.meetings`, :mod:`.agents`, :mod:`.memory`,
:mod:`.gates`, :mod:`.system`, :mod:`.index`.
"""

from __future__ import annotations

from detente.operations.wire.agents import (
    AgentList,
    AgentOut,
    AgentSession,
    OverlappingClaim,
    Readiness,
)
from detente.operations.wire.claims import (
    Abandonment,
    AgentRef,
    Claim,
    ClaimList,
    ClaimOut,
    ClaimView,
    ContractChange,
    Lease,
    MeetingView,
    MemoryImpact,
    Overlap,
    OverlapTarget,
    WriteCheck,
)
from detente.operations.wire.gates import (
    CommitCheck,
    DeploymentView,
    Environment,
    Patch,
    PatchList,
    PatchOut,
    PathFinding,
    PushChecked,
    PushRecorded,
)
from detente.operations.wire.index import (
    ClaimSymbols,
    IntentSide,
    IntentsReconciled,
    SearchHit,
    SearchOut,
    Similarity,
    TouchedFile,
)
from detente.operations.wire.meetings import (
    ContestedTarget,
    Meeting,
    MeetingList,
    MeetingOut,
)
from detente.operations.wire.memory import (
    AppendOut,
    Artifact,
    DocClass,
    Document,
    DocumentList,
    DocumentOut,
    Entry,
    OnDisk,
    Reconciliation,
    Region,
    RenderOut,
    RenderResult,
    Section,
    SectionPatchOut,
)
from detente.operations.wire.record import ClaimStatus, Json, Time
from detente.operations.wire.system import (
    Audit,
    ChainBreak,
    Event,
    EventPage,
    Health,
    Repo,
    RepoList,
)

__all__ = [
    "Abandonment",
    "AgentList",
    "AgentOut",
    "AgentRef",
    "AgentSession",
    "AppendOut",
    "Artifact",
    "Audit",
    "ChainBreak",
    "Claim",
    "ClaimList",
    "ClaimOut",
    "ClaimStatus",
    "ClaimSymbols",
    "ClaimView",
    "CommitCheck",
    "ContestedTarget",
    "ContractChange",
    "DeploymentView",
    "DocClass",
    "Document",
    "DocumentList",
    "DocumentOut",
    "Entry",
    "Environment",
    "Event",
    "EventPage",
    "Health",
    "IntentSide",
    "IntentsReconciled",
    "Json",
    "Lease",
    "Meeting",
    "MeetingList",
    "MeetingOut",
    "MeetingView",
    "MemoryImpact",
    "OnDisk",
    "Overlap",
    "OverlapTarget",
    "OverlappingClaim",
    "Patch",
    "PatchList",
    "PatchOut",
    "PathFinding",
    "PushChecked",
    "PushRecorded",
    "Readiness",
    "Reconciliation",
    "Region",
    "RenderOut",
    "RenderResult",
    "Repo",
    "RepoList",
    "SearchHit",
    "SearchOut",
    "Section",
    "SectionPatchOut",
    "Similarity",
    "Time",
    "TouchedFile",
    "WriteCheck",
]
