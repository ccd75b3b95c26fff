"""The index operations as service calls (part of
:class:`~detente.client.calls.ServiceCalls`, which the HTTP routers call too)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from detente.errors import ValidationError

if TYPE_CHECKING:
    from detente.client import wire
    from detente.client.index_bodies import IntentIn, ReconcileIntentsIn
    from detente.service import Service
    from detente.service.reconcile import IntentSpec

__all__ = ["IndexCalls"]


class IndexCalls:
    """``claim_symbols``, ``reconcile_intents`` and ``search``."""

    service: Service

    def claim_symbols(self, claim_id: str) -> wire.ClaimSymbols:
        """``{claimId, base, head, worktree, files[], symbols[], outsideScope[]}``: what the
        claim's worktree (or branch) touches now, mapped onto tree-sitter symbols."""
        return cast("wire.ClaimSymbols", self.service.reconcile.claim_touches(claim_id))

    def reconcile_intents(self, body: ReconcileIntentsIn) -> wire.IntentsReconciled:
        """``{overlap, shared[], a, b, blastRadius, interactions[], next}``: the symbols
        two intents both touch and the bounded references between them."""
        repo = body.repo or self._repo_of(body.a, body.b)
        answer = self.service.reconcile.reconcile_intents(
            repo, _spec(body.a, "a"), _spec(body.b, "b"), depth=body.depth, limit=body.limit
        )
        return cast("wire.IntentsReconciled", answer)

    def search(self, q: str, repo: str | None = None, limit: int = 20) -> wire.SearchOut:
        """``{mode, results[]}``: claims and memory sections ranked by relevance to ``q``,
        each claim with its symbolic overlaps; ``mode`` is ``semantic`` or ``lexical``."""
        return cast("wire.SearchOut", self.service.search.search(q, repo=repo, limit=limit))

    def _repo_of(self, *sides: IntentIn) -> str:
        for side in sides:
            if side.claim_id:
                return self.service.claims.get_claim(side.claim_id).claim.repo
        served = self.service.list_repos()
        if len(served) == 1:
            return served[0].name
        raise ValidationError("repo is required when several repositories are served", field="repo")


def _spec(side: IntentIn, label: str) -> IntentSpec:
    from detente.service.reconcile import IntentSpec

    return IntentSpec(
        claim_id=side.claim_id,
        actual=side.actual,
        paths=tuple(side.paths),
        symbols=tuple(side.symbols),
        modules=tuple(side.modules),
        rough_change_kind=side.rough_change_kind,
        label=label,
    )
