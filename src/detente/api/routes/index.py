"""Index routes: symbols a claim's work touches, reconcile two intents, search."""

from __future__ import annotations

from fastapi import APIRouter

from detente.client import routes as op
from detente.client import wire
from detente.client.calls import ServiceCalls
from detente.client.index_bodies import ReconcileIntentsIn


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()

    @r.get(op.CLAIM_SYMBOLS.path, operation_id=op.CLAIM_SYMBOLS.name)
    def claim_symbols(claim_id: str) -> wire.ClaimSymbols:
        """``{claimId, base, head, worktree, files[], symbols[], outsideScope[]}``: what the
        claim's worktree (or branch) touches now, mapped onto tree-sitter symbols."""
        return calls.claim_symbols(claim_id)

    @r.post(op.RECONCILE_INTENTS.path, operation_id=op.RECONCILE_INTENTS.name)
    def reconcile_intents(body: ReconcileIntentsIn) -> wire.IntentsReconciled:
        """``{overlap, shared[], a, b, blastRadius, interactions[], next}``: the symbols
        two intents both touch and the bounded references between them."""
        return calls.reconcile_intents(body)

    @r.get(op.SEARCH.path, operation_id=op.SEARCH.name)
    def search(q: str, repo: str | None = None, limit: int = 20) -> wire.SearchOut:
        """``{mode, results[]}``: claims and memory sections ranked by relevance to ``q``,
        each claim with its symbolic overlaps; ``mode`` is ``semantic`` or ``lexical``."""
        return calls.search(q, repo=repo, limit=limit)

    return r
