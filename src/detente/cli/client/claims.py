"""The claims area of the HTTP API: open, read, renew, change scope, suspend, resume,
abandon, complete, take over, and check writes against a claim.

Each method is one endpoint and returns the decoded JSON object (see
:class:`~detente.cli.client.transport.Transport` for the errors it raises).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from detente.cli.client.transport import Transport

__all__ = ["ClaimsEndpoints"]


class ClaimsEndpoints(Transport):
    """``/v1/claims...``: one method per endpoint."""

    def open_claim(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/claims`` (camelCase seed fields): ``{claim, overlaps[], meeting}``."""
        return self._request("POST", "/v1/claims", json=body)

    def get_claim(self, claim_id: str) -> dict[str, Any]:
        """``GET /v1/claims/{id}``: ``{claim, overlaps[], meetings[]}`` (overlaps recomputed)."""
        return self._request("GET", f"/v1/claims/{claim_id}")

    def list_claims(
        self,
        *,
        repo: str | None = None,
        status: str | None = None,
        path: str | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """``GET /v1/claims``: ``{claims[]}`` filtered by repo, status, covered path, agent."""
        params = {"repo": repo, "status": status, "path": path, "agent": agent}
        return self._request("GET", "/v1/claims", params=params)

    def renew(
        self,
        claim_id: str,
        *,
        expected_lease_revision: int,
        expected_claim_revision: int,
        ttl_seconds: int,
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/renew``: ``{claim}``."""
        body = {
            "expectedLeaseRevision": expected_lease_revision,
            "expectedClaimRevision": expected_claim_revision,
            "ttlSeconds": ttl_seconds,
        }
        return self._request("POST", f"/v1/claims/{claim_id}/renew", json=body)

    def scope_change(
        self,
        claim_id: str,
        *,
        expected_claim_revision: int,
        add_paths: Sequence[str] = (),
        remove_paths: Sequence[str] = (),
        add_modules: Sequence[str] = (),
        add_symbols: Sequence[str] = (),
        add_expected_contract_changes: Sequence[str] = (),
        reason: str | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/scope-change``: ``{claim, overlaps[], meeting}``."""
        body = {
            "expectedClaimRevision": expected_claim_revision,
            "addPaths": list(add_paths),
            "removePaths": list(remove_paths),
            "addModules": list(add_modules),
            "addSymbols": list(add_symbols),
            "addExpectedContractChanges": list(add_expected_contract_changes),
            "reason": reason,
        }
        return self._request("POST", f"/v1/claims/{claim_id}/scope-change", json=body)

    def suspend(
        self, claim_id: str, *, expected_claim_revision: int, reason: str | None = None
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/suspend``: ``{claim}``."""
        body = {"expectedClaimRevision": expected_claim_revision, "reason": reason}
        return self._request("POST", f"/v1/claims/{claim_id}/suspend", json=body)

    def resume(
        self, claim_id: str, *, expected_claim_revision: int, reason: str | None = None
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/resume``: ``{claim}``."""
        body = {"expectedClaimRevision": expected_claim_revision, "reason": reason}
        return self._request("POST", f"/v1/claims/{claim_id}/resume", json=body)

    def abandon(
        self,
        claim_id: str,
        *,
        expected_claim_revision: int,
        head_commit: str | None = None,
        diff_summary: Mapping[str, Any] | None = None,
        memory_state: Mapping[str, Any] | None = None,
        reason: str | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/abandon`` (records head commit and diff summary): ``{claim}``."""
        body = {
            "expectedClaimRevision": expected_claim_revision,
            "headCommit": head_commit,
            "diffSummary": dict(diff_summary or {}),
            "memoryState": dict(memory_state or {}),
            "reason": reason,
        }
        return self._request("POST", f"/v1/claims/{claim_id}/abandon", json=body)

    def complete(
        self,
        claim_id: str,
        *,
        expected_claim_revision: int,
        expected_base_ref: Mapping[str, Any] | None = None,
        evidence: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/complete``: ``{claim}`` (``invalid_transition`` for now)."""
        body: dict[str, Any] = {"expectedClaimRevision": expected_claim_revision}
        if expected_base_ref is not None:
            body["expectedBaseRef"] = dict(expected_base_ref)
        if evidence is not None:
            body["evidence"] = dict(evidence)
        return self._request("POST", f"/v1/claims/{claim_id}/complete", json=body)

    def take_over(
        self,
        body: Mapping[str, Any],
        *,
        claim_id: str,
        expected_claim_revision: int,
        pieces: Sequence[Mapping[str, str]] = (),
    ) -> dict[str, Any]:
        """``POST /v1/claims`` with ``takeoverOf``: ``{claim, overlaps[], meeting}``.

        Args:
            body: the successor's seed (``baseCommit`` may be left out: the server then
                keeps the predecessor's base).
            claim_id: the predecessor (expired or abandoned).
            expected_claim_revision: the predecessor's revision as read.
            pieces: ``[{target, decision: continue|supersede|discard}]``.
        """
        seed = dict(body)
        seed["takeoverOf"] = {
            "claimId": claim_id,
            "expectedClaimRevision": expected_claim_revision,
            "pieces": [dict(p) for p in pieces],
        }
        return self._request("POST", "/v1/claims", json=seed)

    def approve_takeover(
        self, claim_id: str, *, expected_claim_revision: int, approver: str, kind: str = "human"
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/takeover/approve`` (``kind`` human|owner): ``{claim, ...}``."""
        body = {
            "expectedClaimRevision": expected_claim_revision,
            "approver": approver,
            "kind": kind,
        }
        return self._request("POST", f"/v1/claims/{claim_id}/takeover/approve", json=body)

    def check_writes(
        self, claim_id: str, paths: Sequence[str], *, fencing_token: int | None = None
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/writes/check``: ``{ok, claimId, paths}`` when allowed.

        Raises ``overlap_blocking`` (``blockers``), ``out_of_scope`` (``paths``),
        ``stale_fencing_token``, ``lease_expired`` or ``invalid_transition`` otherwise.
        """
        body: dict[str, Any] = {"paths": list(paths)}
        if fencing_token is not None:
            body["fencingToken"] = fencing_token
        return self._request("POST", f"/v1/claims/{claim_id}/writes/check", json=body)
