"""Claim use cases: open, read, list, renew, scope change, suspend/resume/abandon."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Unpack

from detente.clock import format_time
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.claims.query import ClaimFilters, selects
from detente.domain.events import CLAIM_OBJECTIVE_CHANGED, Event
from detente.domain.overlap.carveouts import carved_may_overlap
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.overlap.symbols import SEPARATOR
from detente.domain.state import RepoState
from detente.errors import NotFoundError, ValidationError
from detente.service.claim_work import check_worktree
from detente.service.core import ServiceCore
from detente.service.repo_index import resolve_symbols, symbols_matter, worktree_edits
from detente.service.views import ClaimView, claim_command, claim_view

if TYPE_CHECKING:
    from detente.domain.claims.commands import (
        ChangeObjective,
        ChangeScope,
        OpenClaim,
        RenewLease,
        SetStatus,
    )
    from detente.domain.write_check import WriteAnswer


def _scratch_ids(prefix: str) -> str:
    """Ids for a check whose events are thrown away (the real source is not consumed)."""
    return f"{prefix}_check"


class ClaimsService:
    """Claim use cases (API.md "Claims")."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def _with_semantic(self, state: RepoState, view: ClaimView) -> ClaimView:
        """The view plus its advisory semantic overlaps, as stored when claims opened."""
        if not view.claim.holding:
            return view
        from detente.service.search import semantic_overlaps  # the index: not for every read

        return replace(view, semantic=semantic_overlaps(state, view.claim, view.overlaps))

    def _command(self, claim_id: str, decide_fn: Callable[[RepoState], list[Event]]) -> ClaimView:
        """:func:`claim_command`, answering the view with its semantic overlaps (as every
        claim view of the API does)."""
        repo = self.core.repo_of_claim(claim_id)
        return self.core.run(
            repo,
            decide_fn,
            lambda s, _: self._with_semantic(s, claim_view(s, s.claims[claim_id])),
        )

    def _semantic_record(
        self,
        repo: str,
        objective: str,
        *,
        at: datetime | None = None,
        exclude: str | None = None,
    ) -> dict[str, Any] | None:
        """A claim objective's similar holders (but ``exclude``), computed outside the
        repository's transaction (the model costs milliseconds that serialized writes need
        not pay) against the repository's index of the holders' objectives; ``at``: when,
        for a changed objective.

        Raises:
            ValidationError: ``validation_error`` (field ``objective``): the decision's own
                text rule, checked before the text reaches the model's tokenizer.
        """
        # Writes only (the holders' index): a read of claims never imports it.
        from detente.domain.validation import text_field
        from detente.service.search import similarity_now
        from detente.service.similar_holders import holder_similarity

        text_field(objective, "objective", self.core.policy)
        sim = similarity_now(self._holding_objectives)
        when = format_time(at) if at is not None else None
        return holder_similarity(self.core).record(repo, sim, objective, exclude=exclude, at=when)

    def _holding_objectives(self) -> list[str]:
        """Every repository's holding objectives (embedded once the model has loaded)."""
        texts = []
        for name in self.core.names(None):
            state = self.core.fresh(name)
            with self.core.lock(name):
                texts += [c.objective for c in state.claims.values() if c.holding]
        return texts

    # ------------------------------------------------------------------ claims

    def open_claim(self, cmd: OpenClaim) -> ClaimView:
        """Announce a claim (API ``POST /v1/claims``).

        With ``cmd.create_worktree`` the claim's branch and worktree are created at the
        base commit inside the command (:mod:`detente.service.placement`): git refusing
        records nothing, and a refused command leaves no worktree. The base commit is
        resolved once, here; the branch and the directory are checked once, by
        ``git worktree add``.

        Returns:
            The claim (``active``, or ``negotiating`` with its meeting) and its overlaps;
            with a worktree, ``claim.branch`` and ``claim.worktree`` name it.

        Raises:
            ValidationError: bad field (``field`` names it), unknown repo or base commit,
                a ``worktree`` that exists and is not a git worktree of the repository
                (or, when creating one, is not an empty directory: field ``path``).
            BranchInUse: ``branch_in_use``: the branch asked for is checked out elsewhere.
            StaleBase: ``stale_base``: the branch asked for exists at another commit.
        """
        from detente.domain.claims.opening import decide_open  # writes only: reads skip it
        from detente.service.placement import check_workplace, placed, plan_worktree

        repo = self.core.repo(cmd.repo)
        if not cmd.base_commit:
            raise ValidationError(
                "baseCommit is required (only a takeover may omit it)", field="baseCommit"
            )
        check_workplace(repo, cmd.branch, cmd.worktree, self.core.fresh(repo.name))
        claim_id = cmd.claim_id or self.core.ids("clm")
        placement = plan_worktree(repo, cmd, claim_id)
        base = self.core.base_commit(repo, cmd.base_commit)
        if placement is None:
            check_worktree(repo.path, cmd.worktree)
        symbols = resolve_symbols(repo.path, cmd.symbols, base, field="symbols")
        seeded = replace(cmd, base_commit=base, claim_id=claim_id, symbols=symbols)
        if placement is not None:
            seeded = replace(seeded, branch=placement.branch, worktree=str(placement.path))
            self._check_seed(repo.name, seeded)
        record = self._semantic_record(repo.name, cmd.objective)
        from detente.service.search import announce_semantic

        # Group-committed with the other commands waiting on the repository; the view is
        # built inside the batch, right after this opening.
        return placed(
            placement,
            base,
            lambda: self.core.run(
                repo.name,
                lambda s: announce_semantic(
                    s,
                    decide_open(s, seeded, self.core.clock.now(), self.core.ids, self.core.policy),
                    claim_id,
                    record,
                ),
                lambda state, _: self._with_semantic(
                    state, claim_view(state, state.claims[claim_id])
                ),
            ),
        )

    def _check_seed(self, repo: str, seed: OpenClaim) -> None:
        """The seed's own checks (its fields and targets, a branch or worktree another
        live claim uses), before git is asked for a worktree: an opening they refuse
        costs no checkout. The command checks again when it runs (the state may move).

        Raises:
            ValidationError, BranchInUse: what the decision would raise for the seed.
        """
        from detente.domain.claims.opening import announce

        state = self.core.fresh(repo)
        with self.core.lock(repo):
            announce(state, seed, self.core.clock.now(), _scratch_ids, self.core.policy)

    def get_claim(
        self,
        claim_id: str,
        repo: str | None = None,
        *,
        with_work: bool = False,
        with_semantic: bool = True,
    ) -> ClaimView:
        """A claim with overlaps recomputed now. Raises ``not_found``.

        Args:
            claim_id: the claim.
            repo: its repository, when known (saves a lookup).
            with_work: also read its work from git (branch head, commits since base,
                worktree presence, rescue ref): what an expired claim leaves behind.
                Up to three git subprocesses: only when asked.
            with_semantic: also compute the advisory semantic overlaps (loads the
                embedding model on first use in a process: about a second).
        """
        for name in self.core.names(repo):
            state = self.core.fresh(name)
            with self.core.lock(name):
                claim = state.claims.get(claim_id)
                if claim is not None:
                    view = claim_view(state, claim)
                    if with_semantic:
                        view = self._with_semantic(state, view)
                    break
        else:
            raise NotFoundError(f"no claim {claim_id!r}", claimId=claim_id)
        path = self.core.repos[view.claim.repo].path
        if with_work and path is not None:
            from detente.vcs.workstate import work_state  # git: only when asked

            work = work_state(
                path,
                claim_id=claim_id,
                branch=view.claim.branch,
                base_commit=view.claim.base_commit,
                worktree=view.claim.worktree,
            )
            view = replace(view, work=work)
        return view

    def list_claims(self, **filters: Unpack[ClaimFilters]) -> list[Claim]:
        """Claims filtered by repo, status, a path they cover, agent id or name, and agent
        session id (:class:`ClaimFilters`); ordered by ``(created_at, id)`` (newest last).

        Raises:
            ValidationError: an unknown ``status`` or a bad ``path`` pattern.
        """
        status, path = filters.get("status"), filters.get("path")
        if status is not None:
            try:
                ClaimStatus(status)
            except ValueError:
                raise ValidationError(f"unknown status {status!r}", field="status") from None
        out: list[Claim] = []
        for name in self.core.names(filters.get("repo")):
            state = self.core.fresh(name)
            probe = (
                normalize_pattern(path, case_insensitive=state.case_insensitive, field="path")
                if path
                else None
            )
            with self.core.lock(name):
                for claim in state.claims.values():
                    if not selects(claim, filters):
                        continue
                    if probe is not None and not any(
                        carved_may_overlap(p, claim.carved(p), probe)
                        for p in claim.paths + claim.pending_paths
                    ):
                        continue
                    out.append(claim)
        return sorted(out, key=lambda c: (c.created_at, c.id))

    def announce_draft(
        self, claim_id: str, expected_claim_revision: int, ttl_seconds: int | None = None
    ) -> ClaimView:
        """``draft -> announced``, then ``active`` or ``negotiating`` (API ``announce``).

        Raises:
            NotFoundError, RevisionConflict, InvalidTransition (not a draft),
            ValidationError (``leaseTtlSeconds``).
        """
        from detente.domain.claims.opening import decide_announce_draft

        core = self.core
        return self._command(
            claim_id,
            lambda s: decide_announce_draft(
                s,
                claim_id,
                expected_claim_revision,
                ttl_seconds,
                core.clock.now(),
                core.ids,
                core.policy,
            ),
        )

    def renew(self, cmd: RenewLease) -> ClaimView:
        """Extend the lease only (API ``200 {claim}``).

        The answer's view holds the claim alone: ``overlaps`` and ``meetings`` are left
        empty, since a renewal changes neither and recomputing the overlaps cost a sixth
        of a renewal's CPU (heartbeats are the steady write load). Read them with
        :meth:`get_claim`.

        Raises:
            ``lease_expired``, ``revision_conflict``, ``not_found``.
        """
        from detente.domain.claims.decide import decide_renew

        repo = self.core.repo_of_claim(cmd.claim_id)
        return self.core.run(
            repo,
            lambda s: decide_renew(s, cmd, self.core.clock.now(), self.core.ids, self.core.policy),
            lambda state, _: ClaimView(claim=state.claims[cmd.claim_id], overlaps=[], meetings=[]),
            renewal=True,
        )

    def change_scope(self, cmd: ChangeScope) -> ClaimView:
        """Add/remove targets; re-runs overlap analysis (may move to ``negotiating``)."""
        from detente.domain.claims.decide import decide_scope_change

        if cmd.add_symbols:
            repo = self.core.repo_of_claim(cmd.claim_id)
            state = self.core.fresh(repo)
            with self.core.lock(repo):
                base = state.claims[cmd.claim_id].base_commit
            cmd = replace(
                cmd,
                add_symbols=resolve_symbols(
                    self.core.repos[repo].path, cmd.add_symbols, base, field="addSymbols"
                ),
            )
        return self._command(
            cmd.claim_id,
            lambda s: decide_scope_change(
                s, cmd, self.core.clock.now(), self.core.ids, self.core.policy
            ),
        )

    def change_objective(self, cmd: ChangeObjective) -> ClaimView:
        """A claim's new objective, with its semantic advisories computed again (API
        ``POST /v1/claims/{id}/objective``). Never blocks: no target changes.

        The similarity to the other holders is computed before the repository's
        transaction (the model never runs under its lock) and stored on the event with
        the time it was computed; the records other claims made against the old objective
        no longer count (:func:`detente.service.search.semantic_overlaps`).

        Returns:
            The claim view, its ``semantic`` advisories judged on the new objective.

        Raises:
            ``not_found``, ``lease_expired``, ``revision_conflict``, ``invalid_transition``
            (a claim that no longer holds), ``validation_error`` (blank or unchanged).
        """
        from detente.domain.claims.objective import decide_objective_change
        from detente.service.search import announce_semantic

        repo = self.core.repo_of_claim(cmd.claim_id)
        now = self.core.clock.now()
        record = self._semantic_record(repo, cmd.objective, at=now, exclude=cmd.claim_id)
        return self.core.run(
            repo,
            lambda s: announce_semantic(
                s,
                decide_objective_change(s, cmd, now, self.core.ids, self.core.policy),
                cmd.claim_id,
                record,
                CLAIM_OBJECTIVE_CHANGED,
            ),
            lambda s, _: self._with_semantic(s, claim_view(s, s.claims[cmd.claim_id])),
        )

    def set_status(self, cmd: SetStatus) -> ClaimView:
        """Suspend, resume or abandon. Raises ``invalid_transition`` naming from/to."""
        from detente.domain.claims.decide import decide_status

        return claim_command(
            self.core,
            cmd.claim_id,
            lambda s: decide_status(s, cmd, self.core.clock.now(), self.core.ids, self.core.policy),
        )

    def check_write(
        self, claim_id: str, paths: list[str], fencing_token: int | None = None
    ) -> list[str]:
        """May ``claim_id`` write ``paths`` now? Returns the normalised paths if so
        (:meth:`check_targets`)."""
        return self.check_targets(claim_id, paths, fencing_token).targets

    def check_targets(
        self, claim_id: str, targets: list[str], fencing_token: int | None = None
    ) -> WriteAnswer:
        """May ``claim_id`` write ``targets`` (files, or ``path::Symbol``) now?

        Returns:
            The normalised targets and, per file the claim holds only through symbols,
            the symbols the write is limited to (:func:`detente.domain.authority.check_targets`).

        Raises:
            ``overlap_blocking`` (another claim holds a path, or this claim negotiates),
            ``out_of_scope``, ``lease_expired``, ``invalid_transition``, ``not_found``.
        """
        from detente.domain.write_check import check_targets  # the hooks' question only

        repo = self.core.repo_of_claim(claim_id)
        state = self.core.fresh(repo)
        files = [t.split(SEPARATOR, 1)[0] for t in targets]
        with self.core.lock(repo):
            claim = state.claims.get(claim_id)
            matter = symbols_matter(state, claim, files)
        # A write where symbols matter is judged on what the claim's worktree touches now.
        edits = worktree_edits(self.core.repos[repo].path, claim) if matter else None
        with self.core.lock(repo):
            now = self.core.clock.now()
            return check_targets(state, claim_id, targets, now, fencing_token, edits)
