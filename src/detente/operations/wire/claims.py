"""Claim records and the answers of the claim operations (API.md "Claims")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NotRequired

from typing_extensions import TypedDict

from detente.domain.claims import record as domain
from detente.operations.wire.meetings import Meeting
from detente.operations.wire.record import ClaimStatus, Json, Time, derived, record

__all__ = [
    "Abandonment",
    "AgentRef",
    "Claim",
    "ClaimChecks",
    "ClaimList",
    "ClaimOut",
    "ClaimView",
    "ContractChange",
    "Lease",
    "MeetingView",
    "MemoryImpact",
    "MergeCheck",
    "MergeCheckOut",
    "Overlap",
    "OverlapTarget",
    "WriteCheck",
]

# The claim record is declared once, in the domain (:mod:`detente.domain.claims.record`),
# where :func:`~detente.domain.claims.record.claim_to_wire` produces it; these are its
# response models, derived from it (the type checker reads the domain's classes).
if TYPE_CHECKING:
    from detente.domain.claims.record import (
        Abandonment,
        AgentRef,
        ContractChange,
        Lease,
        MemoryImpact,
    )
    from detente.domain.claims.record import ClaimRecord as Claim
else:
    Claim = derived(domain.ClaimRecord, "Claim")
    AgentRef = derived(domain.AgentRef)
    Lease = derived(domain.Lease)
    ContractChange = derived(domain.ContractChange)
    MemoryImpact = derived(domain.MemoryImpact)
    Abandonment = derived(domain.Abandonment)


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
    ``semanticOverlaps`` are advisory ``kind: semantic`` entries; *(added)* ``checks``
    what the claim's actual work predicts, ``{mergeCheck, drifted[], driftCheckedAt}``
    (:class:`ClaimChecks`), present once its work was checked; *(added)* ``receipts``
    (``{sessionId, deliveredUpTo, seenUpTo}``, null when the claim's session is not
    registered) how far the notices of the claim's agent session went.
    """

    claim: Claim
    overlaps: list[Overlap]
    meeting: Meeting | None
    meetings: list[Meeting]
    work: dict[str, Json] | None
    semanticOverlaps: list[Overlap]
    checks: NotRequired[ClaimChecks]
    receipts: NotRequired[dict[str, Json] | None]


@record
class MergeCheck(TypedDict):
    """A claim's newest merge check: the ``head`` checked and when (``at``), the paths its
    branch changes (``changed``), what it was merged with (``checked``: claim ids and
    ``ref:<refname>``), each predicted conflict (``{against, files[], symbols[],
    hunks[{path, line, text}]}``) and the rooms they opened or joined."""

    head: str
    at: Time
    changed: list[str]
    checked: list[str]
    conflicts: list[dict[str, Json]]
    meetingIds: list[str]


@record
class ClaimChecks(TypedDict):
    """What a claim's actual work predicts (advisories, never a block): its newest merge
    check (null before one) and the paths it changed outside its granted scope."""

    mergeCheck: MergeCheck | None
    drifted: list[str]
    driftCheckedAt: Time | None


@record
class MergeCheckOut(ClaimChecks):
    """``POST /v1/claims/{id}/merge-check``: the claim's checks after the check, its
    ``status``, the ``meetings`` its predicted conflicts opened or joined, and the drifted
    paths the ``auto-claim`` policy added to its scope (``autoClaimed``)."""

    claimId: str
    status: str
    meetings: list[Meeting]
    autoClaimed: list[str]


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
