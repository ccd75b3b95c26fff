"""Claim use cases: open, read, list, renew, scope change, suspend/resume/abandon."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from detente.domain.authority import check_write
from detente.domain.claims.commands import ChangeScope, OpenClaim, RenewLease, SetStatus
from detente.domain.claims.decide import decide_renew, decide_scope_change, decide_status
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.claims.opening import decide_open
from detente.domain.claims.wire import claim_to_wire
from detente.domain.events import Event
from detente.domain.gates.integration import CompleteClaim
from detente.domain.meetings.model import Meeting, meeting_to_wire
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.globs import intersect
from detente.domain.overlap.model import Overlap, overlap_to_wire
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.state import RepoState
from detente.errors import NotFoundError, ValidationError
from detente.service.core import ServiceCore
from detente.service.repo_index import resolve_symbols
from detente.vcs.workstate import work_state


@dataclass(frozen=True)
class ClaimView:
    """A claim with its live overlap report and its meetings."""

    claim: Claim
    overlaps: list[Overlap]
    meetings: list[Meeting] = field(default_factory=list)
    work: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        """``{claim, overlaps[], meeting, meetings[]}`` (``meeting``: the newest open one)."""
        open_meetings = [m for m in self.meetings if m.status.value == "open"]
        return {
            "claim": claim_to_wire(self.claim),
            "overlaps": [overlap_to_wire(o) for o in self.overlaps],
            "meeting": meeting_to_wire(open_meetings[-1]) if open_meetings else None,
            "meetings": [meeting_to_wire(m) for m in self.meetings],
            "work": self.work,
        }


class ClaimsService(ServiceCore):
    """Claim use cases (API.md "Claims")."""

    def _view(self, state: RepoState, claim: Claim) -> ClaimView:
        overlaps = (
            find_overlaps(state, Targets.of(claim), exclude=claim.id) if claim.holding else []
        )
        # The holder a newcomer contests is a participant too, though its own record never
        # changed: show it every room it sits in.
        meetings = [state.meetings[m] for m in state.meetings.rooms_of_claim.get(claim.id, ())]
        return ClaimView(claim=claim, overlaps=overlaps, meetings=meetings)

    # ------------------------------------------------------------------ claims

    def open_claim(self, cmd: OpenClaim) -> ClaimView:
        """Announce a claim (API ``POST /v1/claims``).

        Returns:
            The claim (``active``, or ``negotiating`` with its meeting) and its overlaps.

        Raises:
            ValidationError: bad field (``field`` names it), unknown repo or base commit.
        """
        repo = self._repo(cmd.repo)
        if not cmd.base_commit:
            raise ValidationError(
                "baseCommit is required (only a takeover may omit it)", field="baseCommit"
            )
        base = cmd.base_commit
        if repo.path is not None and self._resolve_commit is not None:
            base = self._resolve_commit(repo.path, cmd.base_commit)
        claim_id = cmd.claim_id or self._ids("clm")
        symbols = resolve_symbols(repo.path, cmd.symbols, base, field="symbols")
        seeded = replace(cmd, base_commit=base, claim_id=claim_id, symbols=symbols)
        with self._locks[repo.name]:
            state, _ = self._execute(
                repo.name,
                lambda s: decide_open(s, seeded, self.clock.now(), self._ids, self.policy),
            )
            return self._view(state, state.claims[claim_id])

    def get_claim(
        self, claim_id: str, repo: str | None = None, *, with_work: bool = False
    ) -> ClaimView:
        """A claim with overlaps recomputed now. Raises ``not_found``.

        Args:
            claim_id: the claim.
            repo: its repository, when known (saves a lookup).
            with_work: also read its work from git (branch head, commits since base,
                worktree presence, rescue ref): what an expired claim leaves behind.
        """
        for name in [repo] if repo else sorted(self.repos):
            state = self._fresh(name)
            with self._locks[name]:
                claim = state.claims.get(claim_id)
                if claim is not None:
                    view = self._view(state, claim)
                    break
        else:
            raise NotFoundError(f"no claim {claim_id!r}", claimId=claim_id)
        path = self.repos[view.claim.repo].path
        if with_work and path is not None:
            work = work_state(
                path,
                claim_id=claim_id,
                branch=view.claim.branch,
                base_commit=view.claim.base_commit,
                worktree=view.claim.worktree,
            )
            view = replace(view, work=work)
        return view

    def list_claims(
        self,
        *,
        repo: str | None = None,
        status: str | None = None,
        path: str | None = None,
        agent: str | None = None,
    ) -> list[Claim]:
        """Claims filtered by repo, status, a path they cover, and agent id or name."""
        if status is not None:
            try:
                ClaimStatus(status)
            except ValueError:
                raise ValidationError(f"unknown status {status!r}", field="status") from None
        out: list[Claim] = []
        for name in [repo] if repo else sorted(self.repos):
            state = self._fresh(name)
            probe = (
                normalize_pattern(path, case_insensitive=state.case_insensitive, field="path")
                if path
                else None
            )
            with self._locks[name]:
                for claim in state.claims.values():
                    if status is not None and claim.status.value != status:
                        continue
                    if agent is not None and agent not in (claim.agent.id, claim.agent.name):
                        continue
                    if probe is not None and not any(
                        intersect(p, probe) is not None for p in claim.paths + claim.pending_paths
                    ):
                        continue
                    out.append(claim)
        return sorted(out, key=lambda c: (c.created_at, c.id))

    def _find_repo_of(self, claim_id: str) -> str:
        for name in sorted(self.repos):
            with self._locks[name]:
                state = self._state(name)
                self._catch_up_read(state)
                if claim_id in state.claims:
                    return name
        raise NotFoundError(f"no claim {claim_id!r}", claimId=claim_id)

    def _claim_command(
        self, claim_id: str, decide_fn: Callable[[RepoState], list[Event]]
    ) -> ClaimView:
        repo = self._find_repo_of(claim_id)
        with self._locks[repo]:
            state, _ = self._execute(repo, decide_fn)
            return self._view(state, state.claims[claim_id])

    def renew(self, cmd: RenewLease) -> ClaimView:
        """Extend the lease only. Raises ``lease_expired``, ``revision_conflict``, ``not_found``."""
        return self._claim_command(
            cmd.claim_id, lambda s: decide_renew(s, cmd, self.clock.now(), self._ids, self.policy)
        )

    def change_scope(self, cmd: ChangeScope) -> ClaimView:
        """Add/remove targets; re-runs overlap analysis (may move to ``negotiating``)."""
        if cmd.add_symbols:
            repo = self._find_repo_of(cmd.claim_id)
            base = self._state(repo).claims[cmd.claim_id].base_commit
            cmd = replace(
                cmd,
                add_symbols=resolve_symbols(
                    self.repos[repo].path, cmd.add_symbols, base, field="addSymbols"
                ),
            )
        return self._claim_command(
            cmd.claim_id,
            lambda s: decide_scope_change(s, cmd, self.clock.now(), self._ids, self.policy),
        )

    def set_status(self, cmd: SetStatus) -> ClaimView:
        """Suspend, resume or abandon. Raises ``invalid_transition`` naming from/to."""
        return self._claim_command(
            cmd.claim_id,
            lambda s: decide_status(s, cmd, self.clock.now(), self._ids, self.policy),
        )

    def complete(self, claim_id: str, cmd: CompleteClaim | None = None) -> ClaimView:
        """Complete with evidence; integrate by CAS on the protected ref (API ``complete``).

        See :func:`detente.service.integration.complete_claim` for the steps and errors
        (``evidence_rejected``, ``stale_base``, ``stale_fencing_token``, ...).

        Raises:
            ValidationError: ``cmd`` missing (evidence, expectedBaseRef and fencingToken
                are required), or it names another claim.
        """
        from detente.service.integration import complete_claim

        if cmd is None or cmd.claim_id != claim_id:
            raise ValidationError(
                "complete needs expectedClaimRevision, fencingToken, expectedBaseRef and evidence",
                field="evidence",
            )
        return complete_claim(self, cmd)

    def check_write(
        self, claim_id: str, paths: list[str], fencing_token: int | None = None
    ) -> list[str]:
        """May ``claim_id`` write ``paths`` now? Returns the normalised paths if so.

        Raises:
            ``overlap_blocking`` (another claim holds a path, or this claim negotiates),
            ``out_of_scope``, ``lease_expired``, ``invalid_transition``, ``not_found``.
        """
        repo = self._find_repo_of(claim_id)
        state = self._fresh(repo)
        with self._locks[repo]:
            return check_write(state, claim_id, paths, self.clock.now(), fencing_token)
