"""Claim routes (API.md "Claims")."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from detente.api.schemas import (
    AbandonIn,
    ApproveTakeoverIn,
    ClaimIn,
    CompleteIn,
    RenewIn,
    ScopeChangeIn,
    StatusChangeIn,
    WriteCheckIn,
)
from detente.domain.claims.model import ClaimStatus
from detente.domain.claims.wire import claim_to_wire
from detente.errors import ValidationError
from detente.service import Service


def router(service: Service) -> APIRouter:
    r = APIRouter()

    @r.post("/v1/claims", status_code=201)
    def open_claim(body: ClaimIn) -> dict[str, Any]:
        """Announce a claim; with ``takeoverOf``, take an expired/abandoned claim over."""
        if body.takeover_of is not None:
            return service.take_over(body.to_command(), body.takeover_of.to_request()).to_wire()
        return service.open_claim(body.to_command()).to_wire()

    @r.post("/v1/claims/{claim_id}/takeover", status_code=201)
    def takeover(claim_id: str, body: ClaimIn) -> dict[str, Any]:
        """Alias of ``POST /v1/claims`` with ``takeoverOf`` (its claimId must be this id)."""
        if body.takeover_of is None:
            raise ValidationError("takeoverOf is required", field="takeoverOf")
        if body.takeover_of.claim_id != claim_id:
            raise ValidationError(
                f"takeoverOf.claimId must be {claim_id}", field="takeoverOf.claimId"
            )
        return service.take_over(body.to_command(), body.takeover_of.to_request()).to_wire()

    @r.post("/v1/claims/{claim_id}/takeover/approve")
    def approve_takeover(claim_id: str, body: ApproveTakeoverIn) -> dict[str, Any]:
        """Approve the pending takeover made by successor ``claim_id``."""
        view = service.approve_takeover(
            claim_id, body.expected_claim_revision, body.approver, body.kind
        )
        return view.to_wire()

    @r.get("/v1/claims")
    def list_claims(
        repo: str | None = None,
        status: str | None = None,
        path: str | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        claims = service.list_claims(repo=repo, status=status, path=path, agent=agent)
        return {"claims": [claim_to_wire(c) for c in claims]}

    @r.get("/v1/claims/{claim_id}")
    def get_claim(claim_id: str) -> dict[str, Any]:
        return service.get_claim(claim_id, with_work=True).to_wire()

    @r.post("/v1/claims/{claim_id}/renew")
    def renew(claim_id: str, body: RenewIn) -> dict[str, Any]:
        view = service.renew(body.to_command(claim_id))
        return {"claim": claim_to_wire(view.claim)}

    @r.post("/v1/claims/{claim_id}/scope-change")
    def scope_change(claim_id: str, body: ScopeChangeIn) -> dict[str, Any]:
        return service.change_scope(body.to_command(claim_id)).to_wire()

    @r.post("/v1/claims/{claim_id}/suspend")
    def suspend(claim_id: str, body: StatusChangeIn) -> dict[str, Any]:
        view = service.set_status(body.to_command(claim_id, ClaimStatus.SUSPENDED))
        return {"claim": claim_to_wire(view.claim)}

    @r.post("/v1/claims/{claim_id}/resume")
    def resume(claim_id: str, body: StatusChangeIn) -> dict[str, Any]:
        view = service.set_status(body.to_command(claim_id, ClaimStatus.ACTIVE))
        return {"claim": claim_to_wire(view.claim)}

    @r.post("/v1/claims/{claim_id}/abandon")
    def abandon(claim_id: str, body: AbandonIn) -> dict[str, Any]:
        view = service.set_status(body.to_command(claim_id))
        return {"claim": claim_to_wire(view.claim)}

    @r.post("/v1/claims/{claim_id}/complete")
    def complete(claim_id: str, body: CompleteIn) -> dict[str, Any]:
        """Validate evidence, then advance ``expectedBaseRef.ref`` by CAS (fast-forward).

        ``200 {claim}`` (``integrated``/``completed``); ``409 evidence_rejected`` (every
        failure in ``failures``), ``stale_base`` (claim ``active`` again, ``actual`` = the
        ref's OID), ``stale_fencing_token``; ``422`` when ``expectedBaseRef``,
        ``evidence`` or ``fencingToken`` is missing.
        """
        view = service.complete(claim_id, body.to_command(claim_id))
        return {"claim": claim_to_wire(view.claim)}

    @r.post("/v1/claims/{claim_id}/cleanup")
    def cleanup(claim_id: str) -> dict[str, Any]:
        """Remove a finished claim's worktree entry (only that one; rescue first)."""
        return service.cleanup_worktree(claim_id).to_wire()

    @r.post("/v1/claims/{claim_id}/writes/check")
    def check_write(claim_id: str, body: WriteCheckIn) -> dict[str, Any]:
        """May this claim write these paths now? 409 overlap_blocking / out_of_scope if not."""
        return {
            "ok": True,
            "claimId": claim_id,
            "paths": service.check_write(claim_id, body.paths, body.fencing_token),
        }

    return r
