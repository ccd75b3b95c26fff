"""Lookups the claim fold keeps beside its overlap indexes, so no command walks every claim.

:class:`ClaimLookups` is updated by :meth:`ClaimBook.store
<detente.domain.claims.evolve.ClaimBook.store>` with each replaced record:

- **workspaces**: the live claims (holding, or with a running lease) by branch (as git
  names it, ``refs/heads/`` dropped) and by worktree (normalised path): what the rule
  "one live claim per branch and per worktree" reads when a claim opens;
- **similar_to**: claim id -> the ids of the claims whose stored semantic record names it
  (the reverse direction of the advisory semantic overlaps);
- **objective journal**: the claims whose *holding objective* (their objective while they
  hold, none otherwise) changed, each with the :attr:`~ClaimLookups.objective_epoch` of
  its latest change, oldest change first. A reader that remembers the epoch it has seen
  (the service's similarity index of the holders) reads only the changes after it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from detente.domain.claims.model import Claim, SemanticRecord

__all__ = ["ClaimLookups", "workspace_name"]


def workspace_name(branch: str | None) -> str | None:
    """A recorded branch compared as git names it (older records may carry ``refs/heads/``)."""
    return branch.removeprefix("refs/heads/") if branch else None


class ClaimLookups:
    """The lookups of the module docstring (read them; only the fold updates them).

    Attributes:
        branches / worktrees: branch name or normalised worktree path -> ids of the live
            claims that name it (one id unless older records broke the rule).
        similar_to: claim id -> ids of the claims whose semantic record names it.
        objective_epoch: changes to holding objectives so far (0 before any).
        objective_changes: claim id -> epoch of its latest holding-objective change, in
            epoch order (oldest first).
    """

    def __init__(self) -> None:
        self.branches: dict[str, set[str]] = {}
        self.worktrees: dict[str, set[str]] = {}
        self.similar_to: dict[str, set[str]] = {}
        self.objective_epoch = 0
        self.objective_changes: dict[str, int] = {}

    def update(self, old: Claim | None, new: Claim) -> None:
        """Follow one record's replacement (``old`` None: a new claim)."""
        was, now = _workspace(old), _workspace(new)
        if was != now:
            _move(self.branches, new.id, was[0], now[0])
            _move(self.worktrees, new.id, was[1], now[1])
        before = old.semantic if old is not None else None
        if before is not new.semantic and before != new.semantic:
            for named in _named(before):
                _move(self.similar_to, new.id, named, None)
            for named in _named(new.semantic):
                _move(self.similar_to, new.id, None, named)
        if _holding_objective(old) != _holding_objective(new):
            self.objective_epoch += 1
            self.objective_changes.pop(new.id, None)
            self.objective_changes[new.id] = self.objective_epoch

    def objective_changes_since(self, epoch: int) -> Iterator[str]:
        """Ids of the claims whose holding objective changed after ``epoch`` (newest first;
        each once)."""
        for claim_id, changed in reversed(self.objective_changes.items()):
            if changed <= epoch:
                return
            yield claim_id


def _workspace(claim: Claim | None) -> tuple[str | None, str | None]:
    if claim is None or not (claim.holding or claim.leased):
        return None, None
    worktree = posixpath.normpath(claim.worktree) if claim.worktree else None
    return workspace_name(claim.branch), worktree


def _holding_objective(claim: Claim | None) -> str | None:
    return claim.objective if claim is not None and claim.holding else None


def _named(record: SemanticRecord | None) -> list[str]:
    return [claim_id for claim_id, _ in record.similar] if record is not None else []


def _move(index: dict[str, set[str]], claim_id: str, old: str | None, new: str | None) -> None:
    if old is not None:
        holders = index.get(old)
        if holders is not None:
            holders.discard(claim_id)
            if not holders:
                del index[old]
    if new is not None:
        index.setdefault(new, set()).add(claim_id)
