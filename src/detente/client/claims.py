"""The claim operations: open, read, renew, change scope, suspend, resume, abandon,
complete, take over, clean up, and check writes against a claim.

Each method is one operation (:mod:`detente.operations`) and returns its JSON object;
every method raises the :mod:`detente.errors` exception of a refusal's ``code`` (see
:meth:`~detente.client.base.ClientBase._call`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Unpack

from detente.client.base import ClientBase
from detente.operations import claims as routes
from detente.operations.claim_pages import ClaimQuery

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = ["ClaimOperations"]


class ClaimOperations(ClientBase):
    """``/v1/claims...``: one method per operation."""

    def open_claim(self, body: Mapping[str, Any]) -> wire.ClaimView:
        """``POST /v1/claims`` (camelCase seed fields): ``{claim, overlaps[], meeting}``."""
        return self._call(routes.OPEN_CLAIM, body=body)

    def get_claim(self, claim_id: str, *, include: Sequence[str] | None = None) -> wire.ClaimView:
        """``GET /v1/claims/{id}``: ``{claim, overlaps[], meetings[], work,
        semanticOverlaps[]}`` (overlaps recomputed).

        Args:
            claim_id: the claim.
            include: extra parts to compute: ``work`` (the claim's git work: up to three
                git subprocesses), ``semantic`` (advisory semantic overlaps: loads the
                embedding model once per process). None: the server's default
                (``semantic``); an empty sequence: neither (the cheapest read).
        """
        params = {"include": None if include is None else ",".join(include)}
        return self._call(routes.GET_CLAIM, path={"claim_id": claim_id}, params=params)

    def list_claims(self, **query: Unpack[ClaimQuery]) -> wire.ClaimList:
        """``GET /v1/claims``: ``{claims[], nextCursor}`` filtered by repo, status, covered
        path, agent id or name and agent session id, in ``(createdAt, id)`` order.

        Args:
            query: the filters and page (:class:`~detente.operations.claim_pages.ClaimQuery`):
                ``limit`` is the page size (1..1000; None: every claim), ``cursor`` the
                previous page's ``nextCursor`` (None: from the first claim).
        """
        return self._call(routes.LIST_CLAIMS, params=query)

    def renew(
        self,
        claim_id: str,
        *,
        expected_lease_revision: int,
        expected_claim_revision: int,
        ttl_seconds: int,
    ) -> wire.ClaimOut:
        """``POST /v1/claims/{id}/renew``: ``{claim}``."""
        body = {
            "expectedLeaseRevision": expected_lease_revision,
            "expectedClaimRevision": expected_claim_revision,
            "ttlSeconds": ttl_seconds,
        }
        return self._call(routes.RENEW, path={"claim_id": claim_id}, body=body)

    def announce(
        self, claim_id: str, *, expected_claim_revision: int, ttl_seconds: int | None = None
    ) -> wire.ClaimView:
        """``POST /v1/claims/{id}/announce``: a draft starts its lease and activates or
        negotiates: ``{claim, overlaps[], meeting, meetings[]}``."""
        body: dict[str, Any] = {"expectedClaimRevision": expected_claim_revision}
        if ttl_seconds is not None:
            body["leaseTtlSeconds"] = ttl_seconds
        return self._call(routes.ANNOUNCE, path={"claim_id": claim_id}, body=body)

    def scope_change(
        self,
        claim_id: str,
        *,
        expected_claim_revision: int,
        add_paths: Sequence[str] = (),
        remove_paths: Sequence[str] = (),
        add_modules: Sequence[str] = (),
        add_symbols: Sequence[str] = (),
        add_expected_contract_changes: Sequence[str | Mapping[str, Any]] = (),
        reason: str | None = None,
        remove_modules: Sequence[str] = (),
        remove_symbols: Sequence[str] = (),
    ) -> wire.ClaimView:
        """``POST /v1/claims/{id}/scope-change``: ``{claim, overlaps[], meeting}``."""
        body: dict[str, Any] = {
            "expectedClaimRevision": expected_claim_revision,
            "addPaths": list(add_paths),
            "removePaths": list(remove_paths),
            "addModules": list(add_modules),
            "addSymbols": list(add_symbols),
            "addExpectedContractChanges": list(add_expected_contract_changes),
            "reason": reason,
        }
        if remove_modules:
            body["removeModules"] = list(remove_modules)
        if remove_symbols:
            body["removeSymbols"] = list(remove_symbols)
        return self._call(routes.SCOPE_CHANGE, path={"claim_id": claim_id}, body=body)

    def change_objective(
        self,
        claim_id: str,
        *,
        expected_claim_revision: int,
        objective: str,
        reason: str | None = None,
    ) -> wire.ClaimView:
        """``POST /v1/claims/{id}/objective``: ``{claim, overlaps[], semanticOverlaps[]}``,
        the semantic advisories judged on the new objective."""
        body = {
            "expectedClaimRevision": expected_claim_revision,
            "objective": objective,
            "reason": reason,
        }
        return self._call(routes.CHANGE_OBJECTIVE, path={"claim_id": claim_id}, body=body)

    def suspend(
        self, claim_id: str, *, expected_claim_revision: int, reason: str | None = None
    ) -> wire.ClaimOut:
        """``POST /v1/claims/{id}/suspend``: ``{claim}``."""
        body = {"expectedClaimRevision": expected_claim_revision, "reason": reason}
        return self._call(routes.SUSPEND, path={"claim_id": claim_id}, body=body)

    def resume(
        self, claim_id: str, *, expected_claim_revision: int, reason: str | None = None
    ) -> wire.ClaimOut:
        """``POST /v1/claims/{id}/resume``: ``{claim}``."""
        body = {"expectedClaimRevision": expected_claim_revision, "reason": reason}
        return self._call(routes.RESUME, path={"claim_id": claim_id}, body=body)

    def abandon(
        self,
        claim_id: str,
        *,
        expected_claim_revision: int,
        head_commit: str | None = None,
        diff_summary: Mapping[str, Any] | None = None,
        memory_state: Mapping[str, Any] | None = None,
        reason: str | None = None,
    ) -> wire.ClaimOut:
        """``POST /v1/claims/{id}/abandon`` (records head commit and diff summary): ``{claim}``."""
        body = {
            "expectedClaimRevision": expected_claim_revision,
            "headCommit": head_commit,
            "diffSummary": dict(diff_summary or {}),
            "memoryState": dict(memory_state or {}),
            "reason": reason,
        }
        return self._call(routes.ABANDON, path={"claim_id": claim_id}, body=body)

    def complete(self, claim_id: str, body: Mapping[str, Any]) -> wire.ClaimOut:
        """``POST /v1/claims/{id}/complete``: validate evidence, then advance the base ref.

        Args:
            claim_id: the claim.
            body: ``{expectedClaimRevision, fencingToken?, expectedBaseRef {ref, oid},
                evidence {headCommit, changedFiles[], tests[], ...}, integrate?}``.

        Returns:
            ``{claim}`` with status ``integrated`` or ``completed``.

        Raises:
            EvidenceRejected: ``evidence_rejected`` listing every failure.
            StaleBase: ``stale_base`` (the claim is ``active`` again).
        """
        return self._call(routes.COMPLETE, path={"claim_id": claim_id}, body=body)

    def cleanup(self, claim_id: str) -> wire.ClaimView:
        """``POST /v1/claims/{id}/cleanup``: remove a finished claim's worktree entry."""
        return self._call(routes.CLEANUP, path={"claim_id": claim_id})

    def merge_check(self, claim_id: str) -> wire.MergeCheckOut:
        """``POST /v1/claims/{id}/merge-check``: merge-check the claim's branch with its
        neighbours' and the integration branch, and record its drift: ``{claimId, status,
        mergeCheck, drifted[], driftCheckedAt, meetings[], autoClaimed[]}``."""
        return self._call(routes.MERGE_CHECK, path={"claim_id": claim_id})

    def take_over(
        self,
        body: Mapping[str, Any],
        *,
        claim_id: str,
        expected_claim_revision: int,
        pieces: Sequence[Mapping[str, str]] = (),
    ) -> wire.ClaimView:
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
        return self._call(routes.OPEN_CLAIM, body=seed)

    def approve_takeover(
        self, claim_id: str, *, expected_claim_revision: int, approver: str, kind: str = "human"
    ) -> wire.ClaimView:
        """``POST /v1/claims/{id}/takeover/approve`` (``kind`` human|owner): ``{claim, ...}``."""
        body = {
            "expectedClaimRevision": expected_claim_revision,
            "approver": approver,
            "kind": kind,
        }
        return self._call(routes.APPROVE_TAKEOVER, path={"claim_id": claim_id}, body=body)

    def check_writes(
        self, claim_id: str, paths: Sequence[str], *, fencing_token: int | None = None
    ) -> wire.WriteCheck:
        """``POST /v1/claims/{id}/writes/check``: ``{ok, claimId, paths}`` when allowed.

        Raises ``overlap_blocking`` (``blockers``), ``out_of_scope`` (``paths``),
        ``stale_fencing_token``, ``lease_expired`` or ``invalid_transition`` otherwise.
        """
        body: dict[str, Any] = {"paths": list(paths)}
        if fencing_token is not None:
            body["fencingToken"] = fencing_token
        return self._call(routes.CHECK_WRITES, path={"claim_id": claim_id}, body=body)
