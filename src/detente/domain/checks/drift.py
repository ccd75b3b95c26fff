"""Declared versus touched: the paths a claim's work changes outside its granted scope.

Agents touch what they never declared; the ``pre-commit`` guard and integration refuse
it, late. A check of the claim's actual changes (committed on its branch and uncommitted
in its worktree, read by the service) names each changed path the claim's granted
targets do not cover as ``drifted``: an advisory on the claim (``claim.drifted`` on its
checks stream, ``claim status``, MCP readiness, the dashboard), recorded whenever the
set changes (an empty set clears it).

A path counts as covered when a granted path pattern covers it (minus its carve-outs), a
module holds it, the claim holds a symbol of that file (the guard judges the symbol
edits; drift is about files), or it is a generated artifact at the claim's base commit.
What the ``auto-claim`` policy does with a drift (a scope addition through overlap
analysis) is the service's: :mod:`detente.service.merge_checks`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from detente.domain import events as ev
from detente.domain.authority import owns
from detente.domain.checks.model import CLAIM_DRIFTED, checks_subject
from detente.domain.claims.guards import get_claim
from detente.domain.claims.model import Claim
from detente.domain.overlap.symbols import split_symbol
from detente.domain.policy import IdSource
from detente.domain.state import RepoState

__all__ = ["RecordDrift", "decide_drift", "outside_scope"]


@dataclass(frozen=True)
class RecordDrift:
    """Compare ``touched`` (the claim's changed paths at ``head``) with its scope."""

    claim_id: str
    head: str | None
    touched: tuple[str, ...]


def outside_scope(state: RepoState, claim: Claim, touched: Iterable[str]) -> tuple[str, ...]:
    """The paths of ``touched`` that ``claim``'s granted targets do not cover, sorted."""
    symbol_files = {split_symbol(s)[0] for s in claim.symbols}
    view = state.trees.view(claim.base_commit) if state.trees is not None else None
    out: set[str] = set()
    for path in touched:
        if path in symbol_files or owns(claim, path):
            continue
        if view is not None and view.is_generated(path):
            continue
        out.add(path)
    return tuple(sorted(out))


def decide_drift(state: RepoState, cmd: RecordDrift, ids: IdSource) -> list[ev.Event]:
    """``claim.drifted`` when the claim's drifted paths differ from the last recorded
    ones (none when they are the same, or when the claim no longer holds).

    Raises:
        NotFoundError: ``not_found``: no such claim.
    """
    claim = get_claim(state, cmd.claim_id)
    if not claim.holding:
        return []
    drifted = outside_scope(state, claim, cmd.touched)
    before = state.checks.get(claim.id)
    if drifted == (before.drifted if before is not None else ()):
        return []
    return [
        ev.stream_event(
            ids,
            checks_subject(claim.id),
            CLAIM_DRIFTED,
            claimId=claim.id,
            head=cmd.head,
            drifted=list(drifted),
            touched=len(cmd.touched),
        )
    ]
