"""Claim routes (API.md "Claims"): FastAPI parses, :class:`ServiceCalls` answers."""

from __future__ import annotations

from fastapi import APIRouter

from detente.client import routes as op
from detente.client import wire
from detente.client.bodies import (
    AbandonIn,
    AnnounceIn,
    ApproveTakeoverIn,
    ClaimIn,
    CompleteIn,
    ObjectiveChangeIn,
    RenewIn,
    ScopeChangeIn,
    StatusChangeIn,
    TakeoverIn,
    WriteCheckIn,
)
from detente.client.calls import ServiceCalls


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()

    @r.post(op.OPEN_CLAIM.path, operation_id=op.OPEN_CLAIM.name, status_code=201)
    def open_claim(body: ClaimIn) -> wire.ClaimView:
        """Announce a claim; with ``takeoverOf``, take an expired/abandoned claim over."""
        return calls.open_claim(body)

    @r.post(op.TAKEOVER.path, operation_id=op.TAKEOVER.name, status_code=201)
    def takeover(claim_id: str, body: TakeoverIn) -> wire.ClaimView:
        """Alias of ``POST /v1/claims`` with ``takeoverOf`` (its claimId must be this id)."""
        return calls.takeover(claim_id, body)

    @r.post(op.APPROVE_TAKEOVER.path, operation_id=op.APPROVE_TAKEOVER.name)
    def approve_takeover(claim_id: str, body: ApproveTakeoverIn) -> wire.ClaimView:
        """Approve the pending takeover made by successor ``claim_id``."""
        return calls.approve_takeover(claim_id, body)

    @r.get(op.LIST_CLAIMS.path, operation_id=op.LIST_CLAIMS.name)
    def list_claims(
        repo: str | None = None,
        status: str | None = None,
        path: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> wire.ClaimList:
        """Claims in ``(createdAt, id)`` order; ``limit`` (1..1000) and ``cursor`` (the
        previous page's ``nextCursor``) page through them."""
        return calls.list_claims(
            repo=repo,
            status=status,
            path=path,
            agent=agent,
            session=session,
            limit=limit,
            cursor=cursor,
        )

    @r.get(op.GET_CLAIM.path, operation_id=op.GET_CLAIM.name)
    def get_claim(claim_id: str, include: str | None = None) -> wire.ClaimView:
        """The claim now; ``include`` (comma-separated ``work``, ``semantic``; default
        ``semantic``, empty for neither) adds the claim's git work or semantic advisories."""
        return calls.get_claim(claim_id, include=include)

    @r.post(op.ANNOUNCE.path, operation_id=op.ANNOUNCE.name)
    def announce(claim_id: str, body: AnnounceIn) -> wire.ClaimView:
        """A draft starts its lease and activates (or negotiates) like a fresh claim."""
        return calls.announce(claim_id, body)

    @r.post(op.RENEW.path, operation_id=op.RENEW.name)
    def renew(claim_id: str, body: RenewIn) -> wire.ClaimOut:
        return calls.renew(claim_id, body)

    @r.post(op.SCOPE_CHANGE.path, operation_id=op.SCOPE_CHANGE.name)
    def scope_change(claim_id: str, body: ScopeChangeIn) -> wire.ClaimView:
        return calls.scope_change(claim_id, body)

    @r.post(op.CHANGE_OBJECTIVE.path, operation_id=op.CHANGE_OBJECTIVE.name)
    def change_objective(claim_id: str, body: ObjectiveChangeIn) -> wire.ClaimView:
        return calls.change_objective(claim_id, body)

    @r.post(op.SUSPEND.path, operation_id=op.SUSPEND.name)
    def suspend(claim_id: str, body: StatusChangeIn) -> wire.ClaimOut:
        return calls.suspend(claim_id, body)

    @r.post(op.RESUME.path, operation_id=op.RESUME.name)
    def resume(claim_id: str, body: StatusChangeIn) -> wire.ClaimOut:
        return calls.resume(claim_id, body)

    @r.post(op.ABANDON.path, operation_id=op.ABANDON.name)
    def abandon(claim_id: str, body: AbandonIn) -> wire.ClaimOut:
        return calls.abandon(claim_id, body)

    @r.post(op.COMPLETE.path, operation_id=op.COMPLETE.name)
    def complete(claim_id: str, body: CompleteIn) -> wire.ClaimOut:
        """Validate evidence, then advance ``expectedBaseRef.ref`` by CAS (fast-forward).

        ``200 {claim}`` (``integrated``/``completed``); ``409 evidence_rejected`` (every
        failure in ``failures``), ``stale_base`` (claim ``active`` again, ``actual`` = the
        ref's OID), ``stale_fencing_token``; ``422`` when ``expectedBaseRef``,
        ``evidence`` or ``fencingToken`` is missing.
        """
        return calls.complete(claim_id, body)

    @r.post(op.CLEANUP.path, operation_id=op.CLEANUP.name)
    def cleanup(claim_id: str) -> wire.ClaimView:
        """Remove a finished claim's worktree entry (only that one; rescue first)."""
        return calls.cleanup(claim_id)

    @r.post(op.CHECK_WRITES.path, operation_id=op.CHECK_WRITES.name)
    def check_write(claim_id: str, body: WriteCheckIn) -> wire.WriteCheck:
        """May this claim write these paths now? 409 overlap_blocking / out_of_scope if not."""
        return calls.check_writes(claim_id, body)

    return r
