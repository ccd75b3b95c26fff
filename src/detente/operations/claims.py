"""The claim operations: open, read, renew, change scope or objective, suspend, resume,
abandon, complete, take over, approve a takeover, clean up, check writes, and merge-check
a claim's branch.

Each operation is declared once below (:class:`~detente.operations.declaration.Operation`)
with the handler that meets the service.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Unpack, cast

from detente.errors import ValidationError
from detente.operations import authorize as who
from detente.operations.claim_pages import (
    ClaimQuery,
    check_limit,
    decode_cursor,
    page_of,
    parse_include,
)
from detente.operations.declaration import Operation

#: Reads need the ``read`` role (held by every principal holding a role, unless
#: ``[roles] read`` lists its holders; see :mod:`detente.security.authn`).
READ = who.role("read")

if TYPE_CHECKING:
    from detente.domain.claims.commands import OpenClaim
    from detente.domain.claims.model import Claim
    from detente.domain.claims.query import ClaimFilters
    from detente.operations import bodies as b
    from detente.operations import wire
    from detente.service import Service

__all__ = ["OPERATIONS"]


def _record(claim: Claim) -> wire.Claim:
    from detente.domain.claims.record import claim_to_wire  # a remote client never needs it

    return claim_to_wire(claim)


def _claims(claims: Iterable[Claim]) -> list[wire.Claim]:
    return [_record(c) for c in claims]


def open_claim(service: Service, body: b.ClaimIn) -> wire.ClaimView:
    """Announce a claim; with ``takeoverOf``, take an expired/abandoned claim over."""
    if body.takeover_of is not None:
        view = service.takeover.take_over(body.to_command(), body.takeover_of.to_request())
        return cast("wire.ClaimView", view.to_wire())
    return open_claim_command(service, body.to_command())


def open_claim_command(service: Service, command: OpenClaim) -> wire.ClaimView:
    """:func:`open_claim` of a seed already made the domain command (no takeover): what
    the local CLI runs as :data:`OPEN_CLAIM` (:meth:`Operations.run
    <detente.operations.door.Operations.run>`), without the request model."""
    return cast("wire.ClaimView", service.claims.open_claim(command).to_wire())


def takeover(service: Service, claim_id: str, body: b.TakeoverIn) -> wire.ClaimView:
    """Alias of ``POST /v1/claims`` with ``takeoverOf`` (its claimId must be this id)."""
    if body.takeover_of.claim_id != claim_id:
        raise ValidationError(f"takeoverOf.claimId must be {claim_id}", field="takeoverOf.claimId")
    return open_claim(service, body)


def approve_takeover(service: Service, claim_id: str, body: b.ApproveTakeoverIn) -> wire.ClaimView:
    """Approve as the authenticated human: a ``human`` approval is recorded under the
    caller's name (an ``owner`` approval already had to name the caller)."""
    view = service.takeover.approve_takeover(
        claim_id, body.expected_claim_revision, body.approver, body.kind
    )
    return cast("wire.ClaimView", view.to_wire())


def list_claims(service: Service, **query: Unpack[ClaimQuery]) -> wire.ClaimList:
    page, next_cursor = claim_page(service, **query)
    return {"claims": _claims(page), "nextCursor": next_cursor}


def claim_page(service: Service, **query: Unpack[ClaimQuery]) -> tuple[list[Claim], str | None]:
    """The records of one page of :meth:`list_claims` and the next page's cursor (the
    HTTP listing converts them a chunk at a time, :mod:`detente.api.claim_listing`).

    Raises:
        ValidationError: a bad ``limit``, ``cursor``, ``status`` or ``path``.
    """
    limit, cursor = query.pop("limit", None), query.pop("cursor", None)
    check_limit(limit)
    if cursor is not None:
        decode_cursor(cursor)  # a bad cursor is refused before any work
    claims = service.claims.list_claims(**cast("ClaimFilters", query))
    return page_of(claims, limit=limit, cursor=cursor)


def get_claim(service: Service, claim_id: str, include: str | None = None) -> wire.ClaimView:
    """The claim now; ``include`` (comma-separated ``work``, ``semantic``; default
    ``semantic``, empty for neither) adds the claim's git work or semantic advisories."""
    parts = parse_include(include)
    view = service.claims.get_claim(
        claim_id, with_work="work" in parts, with_semantic="semantic" in parts
    )
    return cast("wire.ClaimView", view.to_wire())


def renew(service: Service, claim_id: str, body: b.RenewIn) -> wire.ClaimOut:
    return {"claim": _record(service.claims.renew(body.to_command(claim_id)).claim)}


def announce(service: Service, claim_id: str, body: b.AnnounceIn) -> wire.ClaimView:
    """A draft starts its lease and activates (or negotiates) like a fresh claim."""
    view = service.claims.announce_draft(
        claim_id, body.expected_claim_revision, body.lease_ttl_seconds
    )
    return cast("wire.ClaimView", view.to_wire())


def scope_change(service: Service, claim_id: str, body: b.ScopeChangeIn) -> wire.ClaimView:
    view = service.claims.change_scope(body.to_command(claim_id))
    return cast("wire.ClaimView", view.to_wire())


def change_objective(service: Service, claim_id: str, body: b.ObjectiveChangeIn) -> wire.ClaimView:
    """Change the claim's objective; its semantic advisories are computed again.

    ``200 {claim, overlaps[], meetings[], semanticOverlaps[]}``; never blocks.
    ``422 validation_error`` for a blank or unchanged objective.
    """
    view = service.claims.change_objective(body.to_command(claim_id))
    return cast("wire.ClaimView", view.to_wire())


def suspend(service: Service, claim_id: str, body: b.StatusChangeIn) -> wire.ClaimOut:
    from detente.domain.claims.model import ClaimStatus  # a remote client never needs it

    return _set_status(service, body.to_command(claim_id, ClaimStatus.SUSPENDED))


def resume(service: Service, claim_id: str, body: b.StatusChangeIn) -> wire.ClaimOut:
    from detente.domain.claims.model import ClaimStatus

    return _set_status(service, body.to_command(claim_id, ClaimStatus.ACTIVE))


def abandon(service: Service, claim_id: str, body: b.AbandonIn) -> wire.ClaimOut:
    return _set_status(service, body.to_command(claim_id))


def _set_status(service: Service, cmd: Any) -> wire.ClaimOut:
    return {"claim": _record(service.claims.set_status(cmd).claim)}


def complete(service: Service, claim_id: str, body: b.CompleteIn) -> wire.ClaimOut:
    """Validate evidence, then advance ``expectedBaseRef.ref`` by CAS (fast-forward).

    ``200 {claim}`` (``integrated``/``completed``); ``409 evidence_rejected`` (every
    failure in ``failures``), ``stale_base`` (claim ``active`` again, ``actual`` = the
    ref's OID), ``stale_fencing_token``; ``422`` when ``expectedBaseRef``,
    ``evidence`` or ``fencingToken`` is missing.
    """
    view = service.gates.complete(claim_id, body.to_command(claim_id))
    return {"claim": _record(view.claim)}


def cleanup(service: Service, claim_id: str) -> wire.ClaimView:
    """Remove a finished claim's worktree entry (only that one; rescue first)."""
    view = service.takeover.cleanup_worktree(claim_id)
    return cast("wire.ClaimView", view.to_wire())


def merge_check(service: Service, claim_id: str) -> wire.MergeCheckOut:
    """Merge the claim's branch with the integration branch and with the branches of the
    live claims sharing a directory with it (``git merge-tree``); a predicted conflict
    with another claim opens or joins a room. Also records the paths its work changed
    outside its granted scope (``drifted``; added to its scope under the ``auto-claim``
    policy). ``422`` when the claim names no branch that exists (or the repository is
    served without a checkout), ``409 invalid_transition`` for a claim that no longer
    holds."""
    view = service.merge_checks.check(claim_id)
    return cast("wire.MergeCheckOut", view.to_wire())


def check_writes(service: Service, claim_id: str, body: b.WriteCheckIn) -> wire.WriteCheck:
    """May this claim write these paths (or ``path::Symbol``) now? 409
    overlap_blocking / out_of_scope if not; ``limitedTo`` names the symbols a file
    write is limited to."""
    answer = service.claims.check_targets(claim_id, body.paths, body.fencing_token)
    out: wire.WriteCheck = {"ok": True, "claimId": claim_id, "paths": list(answer.targets)}
    if answer.limits:
        out["limitedTo"] = {path: list(syms) for path, syms in answer.limits.items()}
    return out


_WRITE = ("revision_conflict", "lease_expired", "invalid_transition")
_TAKEOVER = (*_WRITE, "branch_in_use", "stale_base")

OPEN_CLAIM: Operation[wire.ClaimView] = Operation(
    "open_claim",
    "POST",
    "/v1/claims",
    open_claim,
    rule=who.open_claim,
    limit="claim-open",
    conflicts=_TAKEOVER,
    refuses=True,
    status_code=201,
)
TAKEOVER: Operation[wire.ClaimView] = Operation(
    "takeover",
    "POST",
    "/v1/claims/{claim_id}/takeover",
    takeover,
    rule=who.open_claim,
    limit="claim-open",
    conflicts=_TAKEOVER,
    refuses=True,
    status_code=201,
)
APPROVE_TAKEOVER: Operation[wire.ClaimView] = Operation(
    "approve_takeover",
    "POST",
    "/v1/claims/{claim_id}/takeover/approve",
    approve_takeover,
    rule=who.approve_takeover,
    bind=who.as_approver,
    conflicts=("revision_conflict", "invalid_transition"),
    refuses=True,
)
LIST_CLAIMS: Operation[wire.ClaimList] = Operation(
    "list_claims", "GET", "/v1/claims", list_claims, http="custom", rule=READ
)
GET_CLAIM: Operation[wire.ClaimView] = Operation(
    "get_claim", "GET", "/v1/claims/{claim_id}", get_claim, rule=READ
)
ANNOUNCE: Operation[wire.ClaimView] = Operation(
    "announce",
    "POST",
    "/v1/claims/{claim_id}/announce",
    announce,
    rule=who.own_claim,
    conflicts=(*_WRITE, "branch_in_use", "stale_base"),
)
RENEW: Operation[wire.ClaimOut] = Operation(
    "renew", "POST", "/v1/claims/{claim_id}/renew", renew, rule=who.own_claim, conflicts=_WRITE
)
SCOPE_CHANGE: Operation[wire.ClaimView] = Operation(
    "scope_change",
    "POST",
    "/v1/claims/{claim_id}/scope-change",
    scope_change,
    rule=who.own_claim,
    conflicts=(*_WRITE, "overlap_blocking"),
)
CHANGE_OBJECTIVE: Operation[wire.ClaimView] = Operation(
    "change_objective",
    "POST",
    "/v1/claims/{claim_id}/objective",
    change_objective,
    rule=who.own_claim,
    conflicts=_WRITE,
)
SUSPEND: Operation[wire.ClaimOut] = Operation(
    "suspend",
    "POST",
    "/v1/claims/{claim_id}/suspend",
    suspend,
    rule=who.own_claim,
    conflicts=_WRITE,
)
RESUME: Operation[wire.ClaimOut] = Operation(
    "resume",
    "POST",
    "/v1/claims/{claim_id}/resume",
    resume,
    rule=who.own_claim,
    conflicts=(*_WRITE, "overlap_blocking"),
)
ABANDON: Operation[wire.ClaimOut] = Operation(
    "abandon",
    "POST",
    "/v1/claims/{claim_id}/abandon",
    abandon,
    rule=who.own_claim,
    conflicts=_WRITE,
)
COMPLETE: Operation[wire.ClaimOut] = Operation(
    "complete",
    "POST",
    "/v1/claims/{claim_id}/complete",
    complete,
    rule=who.complete,
    conflicts=(*_WRITE, "stale_base", "stale_fencing_token", "evidence_rejected"),
)
CLEANUP: Operation[wire.ClaimView] = Operation(
    "cleanup",
    "POST",
    "/v1/claims/{claim_id}/cleanup",
    cleanup,
    rule=who.own_claim,
    conflicts=("invalid_transition",),
)
CHECK_WRITES: Operation[wire.WriteCheck] = Operation(
    "check_writes",
    "POST",
    "/v1/claims/{claim_id}/writes/check",
    check_writes,
    rule=who.own_claim,
    conflicts=(
        "overlap_blocking",
        "out_of_scope",
        "stale_fencing_token",
        "lease_expired",
        "invalid_transition",
    ),
)
MERGE_CHECK: Operation[wire.MergeCheckOut] = Operation(
    "merge_check",
    "POST",
    "/v1/claims/{claim_id}/merge-check",
    merge_check,
    rule=who.own_claim,
    conflicts=("invalid_transition", "revision_conflict"),
    read_timeout=120.0,
)

#: In the order the HTTP API registers them (FastAPI matches in order).
OPERATIONS: tuple[Operation[Any], ...] = (
    OPEN_CLAIM,
    TAKEOVER,
    APPROVE_TAKEOVER,
    LIST_CLAIMS,
    GET_CLAIM,
    ANNOUNCE,
    RENEW,
    SCOPE_CHANGE,
    CHANGE_OBJECTIVE,
    SUSPEND,
    RESUME,
    ABANDON,
    COMPLETE,
    CLEANUP,
    CHECK_WRITES,
    MERGE_CHECK,
)
