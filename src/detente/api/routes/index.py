"""Index routes: symbols a claim's work touches, reconcile two intents, search."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from detente.client import routes as op
from detente.client.index_bodies import ReconcileIntentsIn
from detente.client.inprocess import ServiceCalls


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()

    @r.get(op.CLAIM_SYMBOLS.path)
    def claim_symbols(claim_id: str) -> dict[str, Any]:
        """``{claimId, base, head, worktree, files[], symbols[], outsideScope[]}``: what the
        claim's worktree (or branch) touches now, mapped onto tree-sitter symbols."""
        return calls.claim_symbols(claim_id)

    @r.post(op.RECONCILE_INTENTS.path)
    def reconcile_intents(body: ReconcileIntentsIn) -> dict[str, Any]:
        """``{overlap, shared[], a, b, blastRadius, interactions[], next}``: the symbols
        two intents both touch and the bounded references between them."""
        return calls.reconcile_intents(body)

    @r.get(op.SEARCH.path)
    def search(q: str, repo: str | None = None, limit: int = 20) -> dict[str, Any]:
        """``{mode, results[]}``: claims and memory sections ranked by relevance to ``q``,
        each claim with its symbolic overlaps; ``mode`` is ``semantic`` or ``lexical``."""
        return calls.search(q, repo=repo, limit=limit)

    return r
