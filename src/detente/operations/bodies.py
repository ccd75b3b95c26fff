"""Request bodies of the claim and meeting operations (pydantic, camelCase on the wire,
unknown fields refused); each turns itself into its domain command."""

from __future__ import annotations

from typing import Any, ClassVar, cast

from pydantic import BaseModel, ConfigDict, Field

from detente.domain.claims.commands import (
    ChangeObjective,
    ChangeScope,
    OpenClaim,
    RenewLease,
    SetStatus,
    TakeoverRequest,
)
from detente.domain.claims.model import ClaimStatus
from detente.domain.gates.integration import CompleteClaim
from detente.domain.meetings.commands import Accept, AcceptHandoff, Propose, Resolve
from detente.domain.meetings.on_request import RequestMeeting
from detente.operations import body_examples as examples
from detente.operations.body import Body
from detente.operations.claim_command import open_command
from detente.operations.claim_pages import ClaimQuery
from detente.operations.evidence_bodies import BaseRefIn, EvidenceIn
from detente.operations.resolution_bodies import ResolutionIn


class ClaimAgentIn(Body):
    """A claim's holder: a stable agent ``id``, a display ``name``, the ``sessionId``."""

    id: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=200)
    session_id: str | None = Field(default=None, max_length=200)


class MemoryImpactIn(Body):
    path: str = Field(min_length=1)
    mode: str = "section"
    sections: list[str] = []


class ContractChangeIn(Body):
    """An expected contract change ``{type, area, change}``; overlap compares ``area``."""

    type: str | None = Field(default=None, max_length=200)
    area: str = Field(min_length=1, max_length=4000)
    change: str | None = Field(default=None, max_length=4000)

    def to_seed(self) -> dict[str, Any]:
        return {"type": self.type, "area": self.area, "change": self.change}


def _contracts(items: list[str | ContractChangeIn]) -> tuple[str | dict[str, Any], ...]:
    return tuple(c if isinstance(c, str) else c.to_seed() for c in items)


class PieceIn(Body):
    target: str = Field(min_length=1)
    decision: str = "continue"


class TakeoverOfIn(Body):
    """``takeoverOf``: which claim to take over, at which revision, and what to do with
    each of its targets (``continue`` | ``supersede`` | ``discard``; unlisted continue)."""

    claim_id: str = Field(min_length=1)
    expected_claim_revision: int = Field(strict=True)
    pieces: list[PieceIn] = []

    def to_request(self) -> TakeoverRequest:
        return TakeoverRequest(
            claim_id=self.claim_id,
            expected_claim_revision=self.expected_claim_revision,
            pieces=tuple((p.target, p.decision) for p in self.pieces),
        )


class ApproveTakeoverIn(Body):
    """``POST /v1/claims/{id}/takeover/approve``: a human or a CODEOWNERS owner approves."""

    expected_claim_revision: int = Field(strict=True)
    approver: str = Field(min_length=1, max_length=200)
    kind: str = "human"


class ClaimIn(Body):
    """``POST /v1/claims``: the seed fields of a claim.

    ``baseCommit`` is required unless ``takeoverOf`` names a claim to take over (the
    successor then keeps the predecessor's base); ``agent`` defaults to ``anonymous``.
    ``createWorktree: true`` asks the service to create the claim's branch and worktree
    inside the command (``branch`` and an absolute ``worktree`` override the defaults,
    ``claim/<slug>-<id tail>`` next to the main worktree); git refusing records nothing.
    """

    model_config = ConfigDict(
        json_schema_extra={
            "if": {"not": {"required": ["takeoverOf"]}},
            "then": {"required": ["baseCommit"]},
            "examples": [examples.CLAIM],
        }
    )

    aliases: ClassVar[dict[str, str]] = {"ttlSeconds": "leaseTtlSeconds"}

    repo: str = Field(min_length=1)
    objective: str = Field(min_length=1, max_length=4000)
    base_commit: str | None = Field(default=None, min_length=4, max_length=64)
    branch: str | None = None
    worktree: str | None = None
    paths: list[str] = []
    modules: list[str] = []
    symbols: list[str] = []
    expected_contract_changes: list[str | ContractChangeIn] = []
    test_responsibility: list[str] | dict[str, list[str]] = []
    deployment_responsibility: str | None = None
    lease_ttl_seconds: int = Field(default=300, strict=True)
    memory_impacts: list[MemoryImpactIn] = []
    agent: ClaimAgentIn | None = None
    takeover_of: TakeoverOfIn | None = None
    advisory: bool = False
    draft: bool = False
    create_worktree: bool = False

    def to_command(self) -> OpenClaim:
        """The seed as a domain command (:func:`~detente.operations.claim_command.open_command`,
        the one mapping; the decision refuses a missing ``baseCommit`` unless taking over,
        after it checked ``repo``)."""
        return open_command(self.model_dump(by_alias=True, exclude={"takeover_of"}))


class TakeoverIn(ClaimIn):
    """``POST /v1/claims/{id}/takeover``: a claim seed whose ``takeoverOf`` is required
    (its ``claimId`` must be the path's id); ``baseCommit`` defaults to the predecessor's."""

    model_config = ConfigDict(json_schema_extra={"examples": [examples.TAKEOVER]})

    takeover_of: TakeoverOfIn


class AnnounceIn(Body):
    """``POST /v1/claims/{id}/announce``: a draft becomes ``announced`` (lease starts)."""

    aliases: ClassVar[dict[str, str]] = {"ttlSeconds": "leaseTtlSeconds"}

    expected_claim_revision: int = Field(strict=True)
    lease_ttl_seconds: int | None = Field(default=None, strict=True)


class RenewIn(Body):
    """``POST /v1/claims/{id}/renew``: extend the lease by ``ttlSeconds`` from now."""

    model_config = ConfigDict(json_schema_extra={"examples": [examples.RENEW]})

    aliases: ClassVar[dict[str, str]] = {"leaseTtlSeconds": "ttlSeconds"}

    expected_lease_revision: int = Field(strict=True)
    expected_claim_revision: int = Field(strict=True)
    ttl_seconds: int = Field(strict=True)

    def to_command(self, claim_id: str) -> RenewLease:
        return RenewLease(
            claim_id=claim_id,
            expected_lease_revision=self.expected_lease_revision,
            expected_claim_revision=self.expected_claim_revision,
            ttl_seconds=self.ttl_seconds,
        )


class ScopeChangeIn(Body):
    """``POST /v1/claims/{id}/scope-change``: overlap is analysed again."""

    model_config = ConfigDict(json_schema_extra={"examples": [examples.SCOPE_CHANGE]})

    expected_claim_revision: int = Field(strict=True)
    add_paths: list[str] = []
    remove_paths: list[str] = []
    add_modules: list[str] = []
    add_symbols: list[str] = []
    add_expected_contract_changes: list[str | ContractChangeIn] = []
    reason: str | None = None
    remove_modules: list[str] = []
    remove_symbols: list[str] = []

    def to_command(self, claim_id: str) -> ChangeScope:
        return ChangeScope(
            claim_id=claim_id,
            expected_claim_revision=self.expected_claim_revision,
            add_paths=tuple(self.add_paths),
            remove_paths=tuple(self.remove_paths),
            add_modules=tuple(self.add_modules),
            add_symbols=tuple(self.add_symbols),
            add_expected_contract_changes=_contracts(self.add_expected_contract_changes),
            reason=self.reason,
            remove_modules=tuple(self.remove_modules),
            remove_symbols=tuple(self.remove_symbols),
        )


class ObjectiveChangeIn(Body):
    """``POST /v1/claims/{id}/objective``: semantic advisories are computed again."""

    model_config = ConfigDict(json_schema_extra={"examples": [examples.OBJECTIVE_CHANGE]})

    expected_claim_revision: int = Field(strict=True)
    objective: str
    reason: str | None = None

    def to_command(self, claim_id: str) -> ChangeObjective:
        return ChangeObjective(
            claim_id=claim_id,
            expected_claim_revision=self.expected_claim_revision,
            objective=self.objective,
            reason=self.reason,
        )


class StatusChangeIn(Body):
    """``suspend`` / ``resume``."""

    model_config = ConfigDict(json_schema_extra={"examples": [examples.STATUS_CHANGE]})

    expected_claim_revision: int = Field(strict=True)
    reason: str | None = None

    def to_command(self, claim_id: str, to: ClaimStatus) -> SetStatus:
        return SetStatus(
            claim_id=claim_id,
            expected_claim_revision=self.expected_claim_revision,
            to=to,
            reason=self.reason,
        )


class AbandonIn(Body):
    expected_claim_revision: int = Field(strict=True)
    head_commit: str | None = None
    diff_summary: dict[str, Any] = {}
    memory_state: dict[str, Any] = {}
    reason: str | None = None

    def to_command(self, claim_id: str) -> SetStatus:
        return SetStatus(
            claim_id=claim_id,
            expected_claim_revision=self.expected_claim_revision,
            to=ClaimStatus.ABANDONED,
            reason=self.reason,
            details={
                "headCommit": self.head_commit,
                "diffSummary": self.diff_summary,
                "memoryState": self.memory_state,
            },
        )


class CompleteIn(Body):
    """``POST /v1/claims/{id}/complete`` (fields in :mod:`detente.operations.evidence_bodies`).

    ``expectedBaseRef`` and ``evidence`` are required (``422 validation_error`` naming
    the field) except to finish a claim already ``integrated`` by a push.
    """

    model_config = ConfigDict(json_schema_extra={"examples": [examples.COMPLETE]})

    expected_claim_revision: int = Field(strict=True)
    fencing_token: int | None = Field(default=None, strict=True)
    expected_base_ref: BaseRefIn | None = None
    evidence: EvidenceIn | None = None
    integrate: bool = True

    def to_command(self, claim_id: str) -> CompleteClaim:
        base_ref = self.expected_base_ref
        return CompleteClaim(
            claim_id=claim_id,
            expected_claim_revision=self.expected_claim_revision,
            fencing_token=self.fencing_token,
            expected_base_ref=base_ref.to_domain() if base_ref else None,
            evidence=self.evidence.to_domain() if self.evidence else None,
            integrate=self.integrate,
        )


class ProposalIn(Body):
    """``POST /v1/meetings/{id}/proposals``."""

    expected_meeting_revision: int = Field(strict=True)
    claim_id: str = Field(min_length=1)
    resolution: ResolutionIn

    def to_command(self, meeting_id: str) -> Propose:
        resolution = self.resolution.to_domain()
        return Propose(meeting_id, self.expected_meeting_revision, self.claim_id, resolution)


class AcceptIn(Body):
    """``POST /v1/meetings/{id}/proposals/{proposalId}/accept`` and ``.../handoff/accept``."""

    expected_meeting_revision: int = Field(strict=True)
    claim_id: str = Field(min_length=1)

    def to_accept(self, meeting_id: str, proposal_id: str) -> Accept:
        return Accept(meeting_id, self.expected_meeting_revision, self.claim_id, proposal_id)

    def to_handoff(self, meeting_id: str) -> AcceptHandoff:
        return AcceptHandoff(meeting_id, self.expected_meeting_revision, self.claim_id)


class MeetingRequestIn(Body):
    """``POST /v1/claims/{id}/meetings``: open a room with ``withClaimId`` over the two
    claims' ``potential`` overlap (:mod:`detente.domain.meetings.on_request`)."""

    expected_claim_revision: int = Field(strict=True)
    with_claim_id: str = Field(min_length=1)
    reason: str | None = None

    def to_command(self, claim_id: str) -> RequestMeeting:
        return RequestMeeting(
            claim_id, self.expected_claim_revision, self.with_claim_id, self.reason
        )


class ResolveIn(Body):
    """``POST /v1/meetings/{id}/resolve``: a human principal decides."""

    expected_meeting_revision: int = Field(strict=True)
    resolution: ResolutionIn
    resolved_by: str = Field(default="human", min_length=1, max_length=200)

    def to_command(self, meeting_id: str) -> Resolve:
        rev = self.expected_meeting_revision
        return Resolve(meeting_id, rev, self.resolution.to_domain(), self.resolved_by)


class WriteCheckIn(Body):
    """``POST /v1/claims/{id}/writes/check``: concrete repo-relative paths, or one symbol
    of a file each (``path::Qualified.name``)."""

    paths: list[str] = Field(min_length=1)
    fencing_token: int | None = Field(default=None, strict=True)


class ClaimsQueryIn(BaseModel):
    """The query string of ``GET /v1/claims`` (unknown parameters are ignored, as on every
    read); :meth:`to_query` is the :class:`~detente.operations.claim_pages.ClaimQuery`."""

    repo: str | None = None
    status: str | None = None
    path: str | None = None
    agent: str | None = None
    session: str | None = None
    limit: int | None = None
    cursor: str | None = None

    def to_query(self) -> ClaimQuery:
        """The given parameters (None ones left out)."""
        return cast(ClaimQuery, self.model_dump(exclude_none=True))
