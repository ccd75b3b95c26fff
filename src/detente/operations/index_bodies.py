"""Request bodies of the index routes: ``POST /v1/reconcile`` (two intents).

Validated by the HTTP routers and by the in-process client alike.
"""

from __future__ import annotations

from pydantic import Field

from detente.operations.body import Body

__all__ = ["IntentIn", "ReconcileIntentsIn"]


class IntentIn(Body):
    """One side: a claim (declared, or ``actual`` for its diff) or an explicit plan."""

    claim_id: str | None = None
    actual: bool = False
    paths: list[str] = Field(default_factory=list, max_length=1000)
    symbols: list[str] = Field(default_factory=list, max_length=1000)
    modules: list[str] = Field(default_factory=list, max_length=1000)
    rough_change_kind: str | None = Field(default=None, max_length=200)


class ReconcileIntentsIn(Body):
    """``POST /v1/reconcile``: where two intents meet, and the blast radius."""

    repo: str | None = None
    a: IntentIn
    b: IntentIn
    depth: int = Field(default=2, strict=True)
    limit: int = Field(default=50, strict=True)
