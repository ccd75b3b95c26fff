"""Takeover use cases: take an expired/abandoned claim over, approve a gated takeover.

The service gathers the predecessor's facts from git (branch head, changed files,
CODEOWNERS owners) and protects its work before anything else touches it: uncommitted
changes in its worktree are saved under ``refs/detente/rescue/<claim>`` and a locked
worktree whose directory is gone is unlocked and pruned (that entry only), releasing
its branch. A dry run of the decision comes first, so a refused takeover changes
nothing, not even a ref.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from detente.domain import events as ev
from detente.domain.claims import takeover as t
from detente.domain.claims.commands import OpenClaim, TakeoverRequest
from detente.domain.claims.model import Claim
from detente.domain.events import Event
from detente.domain.overlap.globs import compile_pattern
from detente.errors import BranchInUse, DetenteError, InvalidTransition
from detente.security import codeowners
from detente.service.claims import ClaimsService
from detente.service.core import RepoConfig, ServiceCore
from detente.service.search import announce_semantic
from detente.service.views import ClaimView, claim_command, claim_view
from detente.vcs.repo import current_oid
from detente.vcs.rescue import (
    is_linked_worktree,
    prune_missing_worktree,
    remove_one_worktree,
    rescue_dirty_state,
)
from detente.vcs.worktrees import changed_files


class TakeoverService:
    """Successors picking up predecessors' work."""

    def __init__(self, core: ServiceCore, claims: ClaimsService) -> None:
        self.core = core
        self.claims = claims

    def take_over(self, seed: OpenClaim, request: TakeoverRequest) -> ClaimView:
        """Open ``seed`` as the successor of ``request.claim_id``.

        ``seed.base_commit`` may be empty: the successor then keeps the predecessor's base.
        With ``seed.create_worktree`` the successor's new branch and worktree are created
        inside the command (:mod:`detente.service.placement`, the opening's rule: git
        refusing records nothing), starting at the predecessor's head (recorded as
        ``takeoverOf.headCommit``), or at the base when no head is known. The
        predecessor's uncommitted work is rescued first, as without a worktree.

        Returns:
            The successor: ``active``/``negotiating``, or ``blocked`` while the takeover
            awaits approval (contracts, migrations or memory touched).

        Raises:
            ``not_found``, ``revision_conflict``, ``invalid_transition`` (predecessor still
            live, in its grace period, or already taken over), ``validation_error``; with
            a worktree, what :func:`~detente.service.placement.placed` raises when git
            refuses (``branch_in_use``, ``stale_base``, ``validation_error``).
        """
        from detente.service.placement import check_workplace, placed, plan_worktree

        repo = self.core.repo(seed.repo)
        state = self.core.fresh(repo.name)
        check_workplace(repo, seed.branch, seed.worktree, state)
        with self.core.lock(repo.name):
            pred = t.check_takeover_allowed(state, request, self.core.clock.now(), self.core.policy)
        claim_id = seed.claim_id or self.core.ids("clm")
        placement = plan_worktree(repo, seed, claim_id)
        base = seed.base_commit or pred.base_commit
        if seed.base_commit:
            base = self.core.base_commit(repo, seed.base_commit)
        facts = self._predecessor_facts(repo, pred)
        seeded = replace(seed, base_commit=base, claim_id=claim_id)
        if placement is not None:
            seeded = replace(seeded, branch=placement.branch, worktree=str(placement.path))
        # The successor's semantic record, computed like an opening's (outside the lock):
        # the holders its objective resembles now, the predecessor's no longer holding.
        record = self.claims._semantic_record(repo.name, seed.objective, exclude=pred.id)
        return placed(
            placement,
            facts.head_commit or base,
            lambda: self.core.run(
                repo.name,
                lambda s: announce_semantic(
                    s,
                    t.decide_takeover(
                        s,
                        seeded,
                        request,
                        facts,
                        self.core.clock.now(),
                        self.core.ids,
                        self.core.policy,
                    ),
                    claim_id,
                    record,
                ),
                lambda s, _: self.claims._with_semantic(s, claim_view(s, s.claims[claim_id])),
            ),
        )

    def approve_takeover(
        self, successor_id: str, expected_claim_revision: int, approver: str, kind: str
    ) -> ClaimView:
        """Record an approval (``human`` or CODEOWNERS ``owner``) of a pending takeover."""
        return claim_command(
            self.core,
            successor_id,
            lambda s: t.decide_approve(
                s,
                successor_id,
                expected_claim_revision,
                approver,
                kind,
                self.core.clock.now(),
                self.core.ids,
                self.core.policy,
            ),
        )

    def _predecessor_facts(self, repo: RepoConfig, pred: Claim) -> t.PredecessorFacts:
        if repo.path is None:
            return t.PredecessorFacts()
        head = None
        if pred.branch:
            try:
                head = current_oid(repo.path, f"refs/heads/{pred.branch}")
            except DetenteError:
                head = None
        worktree: dict[str, Any] | None = None
        rescue: dict[str, Any] | None = None
        changed: list[str] = []
        if pred.worktree and is_linked_worktree(repo.path, Path(pred.worktree)):
            path = Path(pred.worktree)
            exists = path.is_dir()
            worktree = {"path": pred.worktree, "exists": exists, "pruned": False}
            if exists:
                saved = rescue_dirty_state(path, pred.id)
                if saved is not None:
                    rescue = {"ref": saved.ref, "oid": saved.oid, "paths": saved.paths}
                try:
                    changed = changed_files(path, pred.base_commit)
                except DetenteError:
                    changed = []
            else:
                worktree["pruned"] = prune_missing_worktree(repo.path, path)
        samples = [compile_pattern(p).witness() for p in pred.paths + pred.pending_paths]
        owners, _ = codeowners.load(repo.path).owners_of([s for s in samples if s])
        return t.PredecessorFacts(
            head_commit=head,
            rescue=rescue,
            worktree=worktree,
            changed_files=tuple(changed),
            owners=tuple(owners),
        )

    def cleanup_worktree(self, claim_id: str) -> ClaimView:
        """Remove a finished claim's worktree entry, and only that one; its branch stays.

        Uncommitted changes are first saved under ``refs/detente/rescue/<claim>``. A claim
        that still holds its targets (live, or expired and not yet taken over) is refused:
        its worktree is never pruned, even when its directory is temporarily missing.

        Raises:
            ``not_found``; ``invalid_transition`` for a claim that still holds its work;
            ``branch_in_use`` when another live claim records the same worktree.
        """
        view = self.claims.get_claim(claim_id)
        claim = view.claim
        if claim.holding or claim.leased:
            raise InvalidTransition(
                claim.status.value,
                "cleaned",
                f"claim {claim.id} is {claim.status.value}: its worktree belongs to live work "
                "and is never cleaned (abandon it, or take it over, first)",
            )
        repo = self.core.repos[claim.repo]
        if claim.worktree:
            mine = os.path.realpath(claim.worktree)
            for other in self.core.current_state(claim.repo).claims.values():
                same = other.worktree and os.path.realpath(other.worktree) == mine
                if other.id != claim.id and same and (other.holding or other.leased):
                    raise BranchInUse(
                        f"worktree {claim.worktree!r} belongs to claim {other.id} "
                        f"({other.status.value}), which still holds its work: not removed",
                        holder=claim.worktree,
                        claimId=other.id,
                    )
        rescue: dict[str, Any] | None = None
        removed = False
        if (
            repo.path is not None
            and claim.worktree
            and is_linked_worktree(repo.path, Path(claim.worktree))
        ):
            path = Path(claim.worktree)
            if path.is_dir():
                saved = rescue_dirty_state(path, claim.id)
                if saved is not None:
                    rescue = {"ref": saved.ref, "oid": saved.oid, "paths": saved.paths}
            removed = remove_one_worktree(repo.path, path)
        event = Event(
            id=self.core.ids("evt"),
            type=ev.CLAIM_WORKTREE_CLEANED,
            subject=ev.claim_subject(claim.id),
            data={
                "claimId": claim.id,
                "worktree": claim.worktree,
                "removed": removed,
                "rescue": rescue,
            },
        )
        return claim_command(self.core, claim.id, lambda s: [event])
