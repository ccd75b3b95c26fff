"""The index operations: symbols a claim's work touches, two intents reconciled, search."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from detente.client.base import ClientBase
from detente.operations import index as routes

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = ["IndexOperations"]


class IndexOperations(ClientBase):
    """``/v1/claims/{id}/symbols``, ``/v1/reconcile`` and ``/v1/search``."""

    def claim_symbols(self, claim_id: str) -> wire.ClaimSymbols:
        """``GET /v1/claims/{id}/symbols``: ``{claimId, files[], symbols[], outsideScope[]}``."""
        return self._call(routes.CLAIM_SYMBOLS, path={"claim_id": claim_id})

    def reconcile_intents(
        self,
        a: Mapping[str, Any],
        b: Mapping[str, Any],
        *,
        repo: str | None = None,
        depth: int = 2,
        limit: int = 50,
    ) -> wire.IntentsReconciled:
        """``POST /v1/reconcile``: ``{overlap, shared[], a, b, blastRadius, interactions[]}``.

        Each side is ``{claimId, actual}`` or ``{paths, symbols, modules,
        roughChangeKind}`` (camelCase).
        """
        body = {"repo": repo, "a": dict(a), "b": dict(b), "depth": depth, "limit": limit}
        return self._call(routes.RECONCILE_INTENTS, body=body)

    def search(self, q: str, *, repo: str | None = None, limit: int = 20) -> wire.SearchOut:
        """``GET /v1/search?q=``: claims and memory sections ranked, with their overlaps."""
        return self._call(routes.SEARCH, params={"q": q, "repo": repo, "limit": limit})
