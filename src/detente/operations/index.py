"""The index operations: the symbols a claim's work touches, reconciling two intents, and
search over claims and memory sections."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from detente.errors import ValidationError
from detente.operations import authorize as who
from detente.operations.declaration import Operation

#: Reads need the ``read`` role (held by every principal holding a role, unless
#: ``[roles] read`` lists its holders; see :mod:`detente.security.authn`).
READ = who.role("read")

if TYPE_CHECKING:
    from detente.operations import index_bodies as ib
    from detente.operations import wire
    from detente.service import Service
    from detente.service.reconcile import IntentSpec

__all__ = ["OPERATIONS"]


def claim_symbols(service: Service, claim_id: str) -> wire.ClaimSymbols:
    """``{claimId, base, head, worktree, files[], symbols[], outsideScope[]}``: what the
    claim's worktree (or branch) touches now, mapped onto tree-sitter symbols."""
    return cast("wire.ClaimSymbols", service.reconcile.claim_touches(claim_id))


def reconcile_intents(service: Service, body: ib.ReconcileIntentsIn) -> wire.IntentsReconciled:
    """``{overlap, shared[], a, b, blastRadius, interactions[], next}``: the symbols
    two intents both touch and the bounded references between them."""
    repo = body.repo or _repo_of(service, body.a, body.b)
    answer = service.reconcile.reconcile_intents(
        repo, _spec(body.a, "a"), _spec(body.b, "b"), depth=body.depth, limit=body.limit
    )
    return cast("wire.IntentsReconciled", answer)


def search(service: Service, q: str, repo: str | None = None, limit: int = 20) -> wire.SearchOut:
    """``{mode, results[]}``: claims and memory sections ranked by relevance to ``q``,
    each claim with its symbolic overlaps; ``mode`` is ``semantic`` or ``lexical``."""
    return cast("wire.SearchOut", service.search.search(q, repo=repo, limit=limit))


def _repo_of(service: Service, *sides: ib.IntentIn) -> str:
    for side in sides:
        if side.claim_id:
            return service.claims.get_claim(side.claim_id).claim.repo
    served = service.list_repos()
    if len(served) == 1:
        return served[0].name
    raise ValidationError("repo is required when several repositories are served", field="repo")


def _spec(side: ib.IntentIn, label: str) -> IntentSpec:
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


CLAIM_SYMBOLS: Operation[wire.ClaimSymbols] = Operation(
    "claim_symbols", "GET", "/v1/claims/{claim_id}/symbols", claim_symbols, rule=READ
)
RECONCILE_INTENTS: Operation[wire.IntentsReconciled] = Operation(
    "reconcile_intents", "POST", "/v1/reconcile", reconcile_intents, rule=who.role("claim")
)
SEARCH: Operation[wire.SearchOut] = Operation("search", "GET", "/v1/search", search, rule=READ)

#: In the order the HTTP API registers them.
OPERATIONS: tuple[Operation[Any], ...] = (CLAIM_SYMBOLS, RECONCILE_INTENTS, SEARCH)
