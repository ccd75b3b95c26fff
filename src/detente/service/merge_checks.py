"""Merge checks and drift: what a claim's actual work predicts (issue 33).

:meth:`MergeChecksService.check` reads git first, outside the command lock:

1. the claim's branch head and the paths its branch changes since its work base
   (:func:`detente.vcs.merge_tree.branch_changes`), plus, when its worktree is on disk,
   what is staged, unstaged or untracked there (:func:`detente.vcs.changes.changed_files`);
2. the heads of every branch (one ``git for-each-ref``);
3. ``git merge-tree --write-tree`` of the head with the integration branch and with the
   branch of each live claim that shares a directory with it
   (:func:`detente.domain.checks.merge.merge_partners`: the pairs are bounded by the
   directories, never all claims).

It then records what git said in one command through the group-commit pipeline
(:func:`~detente.domain.checks.merge.decide_merge_check` and
:func:`~detente.domain.checks.drift.decide_drift`: ``claim.merge_checked``, a meeting per
predicted conflict with another claim, ``claim.drifted`` when the drift changed). With
the ``[harness] unclaimed = "auto-claim"`` policy of the repository's ``detente.toml``,
drifted paths are added to the claim's scope by an ordinary scope change (overlap
analysis as for any other: a contested path leaves the claim ``negotiating``).

:meth:`MergeChecksService.sweep` checks, in each served checkout, the live claims whose
branch moved since their newest check, or since their base commit when never checked
(at most ``limit`` per call): the server's sweeper
runs it, and the local ``post-commit`` hook asks for one claim's check.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from detente.domain.checks.drift import RecordDrift, decide_drift
from detente.domain.checks.merge import (
    MergeFinding,
    RecordMergeCheck,
    decide_merge_check,
    merge_partners,
)
from detente.domain.checks.model import ClaimChecks, checks_to_wire
from detente.domain.claims.commands import ChangeScope
from detente.domain.claims.model import Claim
from detente.domain.meetings.model import Meeting, meeting_to_wire
from detente.domain.state import RepoState
from detente.errors import DetenteError, RevisionConflict, ValidationError
from detente.service.core import ServiceCore
from detente.vcs.git import Git, GitError

__all__ = ["MergeCheckView", "MergeChecksService"]

if TYPE_CHECKING:
    from detente.service.claims import ClaimsService
    from detente.vcs.merge_tree import MergePrediction

_log = logging.getLogger("detente.service")


@dataclass(frozen=True)
class MergeCheckView:
    """The answer of a merge check.

    Attributes:
        claim_id: the claim checked.
        checks: its advisories after the check.
        meetings: the rooms its predicted conflicts opened or joined.
        auto_claimed: the drifted paths the ``auto-claim`` policy added to its scope.
        status: the claim's status after the check (a scope addition may negotiate).
    """

    claim_id: str
    checks: ClaimChecks
    meetings: tuple[Meeting, ...]
    auto_claimed: tuple[str, ...] = ()
    status: str = ""

    def to_wire(self) -> dict[str, Any]:
        """``{claimId, status, mergeCheck, drifted[], driftCheckedAt, meetings[],
        autoClaimed[]}``."""
        return {
            "claimId": self.claim_id,
            "status": self.status,
            **checks_to_wire(self.checks),
            "meetings": [meeting_to_wire(m) for m in self.meetings],
            "autoClaimed": list(self.auto_claimed),
        }


@dataclass(frozen=True)
class _Read:
    """What git said, read before the command."""

    head: str
    changed: tuple[str, ...]
    touched: tuple[str, ...]
    findings: tuple[MergeFinding, ...]


class MergeChecksService:
    """Merge checks between live claims, and declared-versus-touched drift."""

    def __init__(self, core: ServiceCore, claims: ClaimsService) -> None:
        self.core = core
        self.claims = claims

    def check(self, claim_id: str) -> MergeCheckView:
        """Merge-check ``claim_id``'s branch and compare its work with its scope.

        Returns:
            The :class:`MergeCheckView`.

        Raises:
            NotFoundError: ``not_found``: no such claim.
            ValidationError: ``validation_error`` (field ``claimId``): the repository is
                served without a checkout, or the claim names no branch that exists.
            InvalidTransition: ``invalid_transition``: the claim no longer holds.
            VcsError: ``vcs_error``: git failed.
        """
        repo = self.core.repo_of_claim(claim_id)
        config = self.core.repos[repo]
        if config.path is None:
            raise ValidationError(
                f"repository {repo!r} is served without a checkout: no branch to merge",
                field="claimId",
            )
        state = self.core.fresh(repo)
        with self.core.lock(repo):
            claim = state.claims[claim_id]
        heads = _branch_heads(Git(config.path))
        read = self._read(state, repo, config.path, config.default_branch, claim, heads)
        return self._record(repo, claim_id, read)

    def advisories(self, repo: str | None = None) -> dict[str, dict[str, Any]]:
        """Claim id -> ``{mergeCheck, drifted[], driftCheckedAt}`` of every live claim that
        was ever checked (of ``repo``, or of every served repository)."""
        out: dict[str, dict[str, Any]] = {}
        for name in self.core.names(repo):
            state = self.core.fresh(name)
            with self.core.lock(name):
                for claim_id, checks in state.checks.items():
                    claim = state.claims.get(claim_id)
                    if claim is not None and claim.holding:
                        out[claim_id] = checks_to_wire(checks)
        return out

    def sweep(self, limit: int = 8) -> int:
        """Check the live claims whose branch moved since their newest check, at most
        ``limit`` of them over all repositories; a failure is logged, never raised.

        Returns:
            How many claims were checked.
        """
        done = 0
        for name in sorted(self.core.repos):
            path = self.core.repos[name].path
            if path is None or done >= limit:
                continue
            try:
                heads = _branch_heads(Git(path))
                state = self.core.fresh(name)
                with self.core.lock(name):
                    moved = [
                        c.id
                        for c in state.claims.values()
                        if c.holding and c.branch and _moved(state, c, heads)
                    ]
            except DetenteError as exc:
                _log.warning("merge-check sweep of %s failed: %s", name, exc)
                continue
            for claim_id in moved[: limit - done]:
                try:
                    self.check(claim_id)
                except DetenteError as exc:
                    _log.warning("merge check of %s failed: %s", claim_id, exc)
                done += 1
        return done

    def _read(
        self,
        state: RepoState,
        repo: str,
        path: Path,
        default_branch: str,
        claim: Claim,
        heads: dict[str, str],
    ) -> _Read:
        from detente.service.claim_work import work_base
        from detente.vcs.merge_tree import branch_changes, predict_merge

        head = heads.get(_ref(claim.branch)) if claim.branch else None
        if head is None:
            raise ValidationError(
                f"claim {claim.id} names no branch that exists ({claim.branch!r}): "
                "nothing to merge",
                field="claimId",
            )
        git = Git(path)
        target = _ref(default_branch)
        base = work_base(git, claim.base_commit, head, target)
        changed = branch_changes(git, base, head)
        touched = changed
        if claim.worktree and Path(claim.worktree).is_dir():
            from detente.vcs.changes import changed_files

            touched = tuple(sorted({*changed, *changed_files(Path(claim.worktree), base)}))
        with self.core.lock(repo):
            partners = merge_partners(state, claim.id, touched)
        against = [(f"ref:{target}", heads.get(target))]
        against += [(o.id, heads.get(_ref(o.branch or ""))) for o in partners]
        findings: list[MergeFinding] = []
        for name, theirs in against:
            if theirs is None or theirs == head:
                continue
            try:
                prediction = predict_merge(git, head, theirs)
            except GitError as exc:  # e.g. unrelated histories: nothing to predict
                _log.warning("merge check of %s against %s skipped: %s", claim.id, name, exc)
                continue
            symbols = () if prediction.clean else _changed_symbols(path, git, prediction)
            findings.append(_finding(name, prediction, symbols))
        return _Read(head, changed, touched, tuple(findings))

    def _record(self, repo: str, claim_id: str, read: _Read) -> MergeCheckView:
        cmd = RecordMergeCheck(claim_id, read.head, read.changed, read.findings)
        drift = RecordDrift(claim_id, read.head, read.touched)

        def decide(state: RepoState) -> list[Any]:
            now = self.core.clock.now()
            return [
                *decide_merge_check(state, cmd, now, self.core.ids, self.core.policy),
                *decide_drift(state, drift, self.core.ids),
            ]

        def view(state: RepoState, _: object) -> MergeCheckView:
            checks = state.checks.get(claim_id, ClaimChecks())
            rooms = checks.merge.meeting_ids if checks.merge else ()
            return MergeCheckView(
                claim_id,
                checks,
                tuple(state.meetings[m] for m in rooms if m in state.meetings),
                status=state.claims[claim_id].status.value,
            )

        answer = self.core.run(repo, decide, view)
        if not answer.checks.drifted or not self._auto_claims(repo):
            return answer
        claimed = self._auto_claim(repo, answer)
        if not claimed.auto_claimed:
            return claimed
        # What the scope now covers is no drift any more: record the drift anew.
        after = self.core.run(repo, lambda state: decide_drift(state, drift, self.core.ids), view)
        return replace(claimed, checks=after.checks)

    def _auto_claims(self, repo: str) -> bool:
        """Does the repository's ``detente.toml`` say ``[harness] unclaimed = "auto-claim"``?"""
        path = self.core.repos[repo].path
        if path is None or not (path / "detente.toml").is_file():
            return False
        from detente.config import load_config

        return load_config(path).harness.get("unclaimed") == "auto-claim"

    def _auto_claim(self, repo: str, answer: MergeCheckView) -> MergeCheckView:
        """Add the drifted paths to the claim's scope (overlap analysis as for any scope
        change); a revision that moved meanwhile is read again once."""
        for attempt in (1, 2):
            claim = self.core.fresh(repo).claims[answer.claim_id]
            wanted = tuple(p for p in answer.checks.drifted if p not in claim.paths)
            if not wanted or not claim.leased:
                return answer
            try:
                view = self.claims.change_scope(
                    ChangeScope(
                        claim.id,
                        expected_claim_revision=claim.revision,
                        add_paths=wanted,
                        reason="auto-claimed: the claim's work changed it outside its "
                        "scope (drift)",
                    )
                )
            except RevisionConflict:
                if attempt == 2:
                    raise
                continue
            return MergeCheckView(
                answer.claim_id,
                answer.checks,
                answer.meetings + tuple(view.meetings),
                auto_claimed=wanted,
                status=view.claim.status.value,
            )
        return answer


def _ref(branch: str) -> str:
    return branch if branch.startswith("refs/") else f"refs/heads/{branch}"


def _branch_heads(git: Git) -> dict[str, str]:
    """``refs/heads/<name> -> OID`` of every local branch (one git call)."""
    out = git.run("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/", timeout=10.0)
    pairs = (line.rsplit(" ", 1) for line in out.stdout.splitlines() if " " in line)
    return {ref: oid for ref, oid in pairs}


def _moved(state: RepoState, claim: Claim, heads: dict[str, str]) -> bool:
    """Has the claim's branch moved since its newest check (since its base commit, when
    it was never checked)?"""
    head = heads.get(_ref(claim.branch or ""))
    if head is None:
        return False
    found = state.checks.get(claim.id)
    if found is None or found.merge is None:
        return head != claim.base_commit
    return found.merge.head != head


def _finding(against: str, prediction: MergePrediction, symbols: tuple[str, ...]) -> MergeFinding:
    return MergeFinding(
        against,
        prediction.theirs,
        prediction.clean,
        prediction.files,
        tuple((h.path, h.line, h.text) for h in prediction.hunks),
        symbols,
    )


def _changed_symbols(repo: Path, git: Git, prediction: MergePrediction) -> tuple[str, ...]:
    """The definitions either side changed (since their merge base) in the conflicted
    files, where the symbol index knows them; none when it cannot tell (a language it
    does not parse, a failure: the declared symbols still name the claims' own)."""
    from detente.index.diff import touched
    from detente.service.repo_index import symbol_index

    wanted = set(prediction.files)
    try:
        base = git.text("merge-base", prediction.ours, prediction.theirs)
        index = symbol_index(repo)
        found = {
            symbol
            for side in (prediction.ours, prediction.theirs)
            for change in touched(index, base, head=side)
            if change.path in wanted
            for symbol in change.symbols
        }
    except DetenteError as exc:
        _log.warning("symbols of a predicted merge conflict not read: %s", exc)
        return ()
    return tuple(sorted(found))
