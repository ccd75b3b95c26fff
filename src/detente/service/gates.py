"""Evidence-gated integration and the hook checks, over the command path.

:meth:`GatesService.complete` is ``POST /v1/claims/{id}/complete``:

1. read the claim (no lock) and the git facts its evidence names (git IO outside the
   repository's lock: commits are immutable, only the ref is contested);
2. under the repository's serialized command: check the claim, validate the evidence
   (``evidence_rejected``), record ``ready_for_review``, then compare-and-swap the
   protected ref with ``git update-ref <ref> <head> <oid>``;
3. the CAS won: ``integrated`` (``completed`` when nothing is pending). It lost:
   ``ready_for_review -> active`` is recorded, then ``409 stale_base`` carries the ref's
   current OID in ``actual``.

A command retried after the ref moved but before its events were stored (a crash, a
store failure, a lost append race) finds the ref already at its head commit and records
the integration then (``recovered: true``), so the ref and the log converge; so does a
retry after a merge over memory commits (its merge, found on the ref by its
``Detente-Claim`` trailer). With no retry, the server's next start records a landing
whose commit names its claim (a merge's always does; :meth:`GatesService.recover_landings`).

:class:`GatesService` answers the git hooks: the server-side ``pre-receive`` check of a
push to a protected ref, and the local ``pre-commit`` guard.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.claims.record import claim_to_wire
from detente.domain.events import CLAIM_INTEGRATED, Event
from detente.domain.gates.evidence import BaseRef, GitFacts
from detente.domain.gates.findings import PushedCommit, push_failures
from detente.domain.gates.integration import (
    CompleteClaim,
    check_completion,
    decide_finish,
    decide_landed,
    decide_pushed,
    decide_ready,
    integrated_events,
    stale_events,
)
from detente.domain.memory.model import DocClass
from detente.domain.named_authority import Edit
from detente.domain.state import RepoState
from detente.errors import DetenteError, EvidenceRejected, StaleBase, ValidationError
from detente.service.commit_check import CommitCheck, check_commit
from detente.service.core import ServiceCore
from detente.service.memory_branch import MemoryBranch
from detente.service.repo_refs import ref_store
from detente.service.views import ClaimView, claim_view
from detente.vcs.refs import check_ref_name
from detente.vcs.refstore import GitRefStore, RefStore

__all__ = ["CommitCheck", "GatesService"]

_log = logging.getLogger("detente.gates")


def _facts(
    refs: RefStore, path: Path | None, claim: Claim, head: str, base: str, symbols_held: bool
) -> GitFacts:
    found = refs.commit_facts(
        head=head, base=base, claim_base=claim.base_commit, branch=claim.branch
    )
    return GitFacts(
        head_oid=found.head_oid,
        head_time=found.head_time,
        base_oid=found.base_oid,
        from_base=found.from_base,
        from_claim_base=found.from_claim_base,
        branch_head=found.branch_head,
        diff=found.diff,
        transient=found.transient,
        symbol_edits=_symbol_edits(
            path, bool(claim.symbols) or symbols_held, found.base_oid, found.head_oid
        ),
    )


def _symbol_edits(
    path: Path | None, needed: bool, base: str | None, head: str | None
) -> tuple[tuple[str, tuple[str, ...], bool], ...]:
    """What the diff does to symbols, when some claim names symbols (else nothing): the
    claim's own symbols cover what stays inside them, others' symbols refuse what they
    touch (:mod:`detente.domain.named_authority`). A repository without a checkout (a
    fake ref store) has no symbol index."""
    if not needed or base is None or head is None or path is None:
        return ()
    from detente.index.diff import touched
    from detente.service.repo_index import symbol_index

    files = touched(symbol_index(path), base, head=head)
    return tuple((f.path, f.symbols, f.outside) for f in files)


def _maintained(state: RepoState) -> set[str]:
    """Files detente keeps modified in checkouts: registered memory documents (their own
    revision and hash checks guard them; a checkout holding them is still clean)."""
    return {doc.path for doc in state.memory.documents.values()}


def _landed(refs: RefStore, base_ref: BaseRef, claim_id: str, tip: str | None) -> str | None:
    """The commit on ``tip`` past ``base_ref.oid`` that names ``claim_id`` in its
    ``Detente-Claim`` trailer (a merge over memory commits whose events were lost: the
    retried command records it), or None."""
    from detente.vcs.landed import landings_since

    if not isinstance(refs, GitRefStore) or tip is None:
        return None
    found = landings_since(refs.path, tip, [base_ref.oid]).get(claim_id)
    return found[0] if found is not None else None


def _merge_over_memory(
    refs: RefStore, state: RepoState, base_ref: BaseRef, claim_id: str, head: str, tip: str | None
) -> str | None:
    """When the ref moved from ``base_ref.oid`` only by detente's memory commits, integrate
    ``head`` as a merge over them (:mod:`detente.vcs.memory_merge`); its OID, or None (the
    claim must rebase: ``stale_base``)."""
    from detente.vcs.memory_merge import memory_commits_only, merge_over_memory

    if not isinstance(refs, GitRefStore) or tip is None:
        return None
    documents = {
        d.path for d in state.memory.documents.values() if d.doc_class is not DocClass.PRIVATE
    }
    message = f"detente: integrate {claim_id} over memory commits\n\nDetente-Claim: {claim_id}\n"
    for _ in range(3):  # another process's memory write may land in between: once more
        if (
            tip is None
            or not documents
            or not memory_commits_only(refs.path, base_ref.oid, tip, documents)
        ):
            return None
        merged = merge_over_memory(refs.path, tip, head, documents, message)
        checkouts = refs.refuse_dirty_checkouts(base_ref.ref, tip, merged, _maintained(state))
        try:
            refs.cas_update_ref(base_ref.ref, merged, tip, message=f"detente: integrate {claim_id}")
        except StaleBase as exc:
            tip = exc.extra.get("actual")
            continue
        refs.update_checkouts(checkouts, tip, merged)
        return merged
    return None


class GatesService:
    """Integration by evidence and CAS, and the checks behind the git hooks.

    Args:
        core: the command path (:class:`~detente.service.core.ServiceCore`); the checks
            are :mod:`detente.domain.gates.findings`, the decisions
            :mod:`detente.domain.gates.integration`.
    """

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def _memory_branch(self) -> MemoryBranch:
        return self.core.effect("memory", lambda: MemoryBranch(self.core))

    def complete(self, claim_id: str, cmd: CompleteClaim | None = None) -> ClaimView:
        """Complete a claim with evidence; integrate it by CAS (API ``complete``; see the
        module docstring for the steps).

        Returns:
            The claim, ``integrated`` or ``completed`` (``ready_for_review`` when
            ``cmd.integrate`` is False).

        Raises:
            NotFoundError, ValidationError (``expectedBaseRef``, ``evidence``,
            ``fencingToken``; a repository without a path), StaleFencingToken, LeaseExpired,
            RevisionConflict, InvalidTransition, EvidenceRejected (``failures`` lists every
            reason), StaleBase (the claim is ``active`` again; ``actual`` = the ref's OID).
            ValidationError also when ``cmd`` is missing (evidence and expectedBaseRef are
            required; without fencingToken the claim's own is used) or names another claim.
        """
        if cmd is None or cmd.claim_id != claim_id:
            raise ValidationError(
                "complete needs expectedClaimRevision, expectedBaseRef and evidence",
                field="evidence",
            )
        repo = self.core.repo_of_claim(cmd.claim_id)
        state = self.core.fresh(repo)
        with self.core.lock(repo):
            snapshot = state.claims[cmd.claim_id]
        if snapshot.status is ClaimStatus.INTEGRATED:
            return self._finish(repo, cmd)
        path = self.core.repos[repo].path
        refs = ref_store(self.core.repos[repo])
        base_ref, evidence = cmd.expected_base_ref, cmd.evidence
        if base_ref is None or not base_ref.oid:
            raise ValidationError(
                "expectedBaseRef {ref, oid} is required: name the OID you read the protected ref "
                "at (it is never defaulted to the current tip)",
                field="expectedBaseRef.oid",
            )
        if evidence is None:
            raise ValidationError("evidence is required", field="evidence")
        check_ref_name(base_ref.ref)
        facts = _facts(
            refs, path, snapshot, evidence.head_commit, base_ref.oid, bool(state.claims.symbols)
        )
        stale: list[StaleBase] = []

        def decide(s: RepoState) -> list[Event]:
            stale.clear()
            now = self.core.clock.now()
            claim = check_completion(s, cmd, now)
            if claim.status is ClaimStatus.INTEGRATED:  # integrated by a concurrent request
                return decide_finish(claim, cmd, self.core.ids)
            events = decide_ready(s, claim, cmd, facts, self.core.ids)
            head = facts.head_oid
            if not cmd.integrate or head is None:
                return events
            recovered = False
            # The checkouts' follow of earlier memory commits first: both rewrite a
            # checkout (its index.lock); none is queued while this batch runs.
            self._memory_branch().settle(repo)
            checkouts = refs.refuse_dirty_checkouts(
                base_ref.ref, base_ref.oid, head, _maintained(s)
            )
            try:
                refs.cas_update_ref(
                    base_ref.ref, head, base_ref.oid, message=f"detente: integrate {claim.id}"
                )
                refs.update_checkouts(checkouts, base_ref.oid, head)
            except StaleBase as exc:
                actual = exc.extra.get("actual")
                landed = _landed(refs, base_ref, claim.id, actual)
                if landed is not None:  # merged over memory commits, then the events lost
                    head, recovered = landed, True
                elif actual != head:
                    merged = _merge_over_memory(refs, s, base_ref, claim.id, head, actual)
                    if merged is None:
                        stale.append(exc)
                        return events + stale_events(claim, base_ref, actual, self.core.ids)
                    head = merged
                else:
                    recovered = True
            return events + integrated_events(
                s,
                claim,
                base_ref,
                head,
                self.core.ids,
                recovered=recovered,
                memory_updates=evidence.memory_updates,
            )

        with self.core.lock(repo):
            state, _ = self.core.execute(repo, decide)
            view = claim_view(state, state.claims[cmd.claim_id])
        if stale:
            exc = stale[0]
            raise StaleBase(
                f"{exc.detail}; claim {cmd.claim_id} is active again: rebase onto "
                f"{exc.extra.get('actual')} and re-collect the evidence",
                expected=base_ref.oid,
                actual=exc.extra.get("actual"),
                ref=base_ref.ref,
                current=claim_to_wire(view.claim),
            )
        return view

    def _finish(self, repo: str, cmd: CompleteClaim) -> ClaimView:
        def decide(s: RepoState) -> list[Event]:
            claim = check_completion(s, cmd, self.core.clock.now())
            return decide_finish(claim, cmd, self.core.ids)

        return self.core.run(repo, decide, lambda s, _: claim_view(s, s.claims[cmd.claim_id]))

    def recover_landings(self) -> int:
        """Record the landings the log lost (:func:`~detente.domain.gates.integration.
        decide_landed`): a server's start, after a crash between a ref's compare-and-swap
        and the commit of its events, when no client retries the command.

        Per served git repository with an ``active`` or ``ready_for_review`` claim, one
        ``git log`` of its default branch back to those claims' base commits, for
        ``Detente-Claim`` trailers. A claim whose lease expired meanwhile stays expired
        (the audit names its landing). Git or store failures are logged, never raised.

        Returns:
            How many claims were recorded ``integrated``.
        """
        from detente.vcs.landed import landings_since

        live = (ClaimStatus.ACTIVE, ClaimStatus.READY_FOR_REVIEW)
        recovered = 0
        for name in sorted(self.core.repos):
            config = self.core.repos[name]
            if config.path is None or config.refs is not None:
                continue
            ref = f"refs/heads/{config.default_branch}"
            try:
                state = self.core.fresh(name)
                with self.core.lock(name):
                    bases = {c.base_commit for c in state.claims.values() if c.status in live}
                if not bases:
                    continue
                found = landings_since(config.path, ref, sorted(bases))
                if not found:
                    continue
                decide = functools.partial(
                    decide_landed, ref=ref, landings=found, ids=self.core.ids
                )
                _, stored = self.core.execute(name, decide)
            except DetenteError as exc:
                _log.warning("%s: cannot recover lost landings: %s", name, exc.detail)
                continue
            for event in (e for e in stored if e.type == CLAIM_INTEGRATED):
                recovered += 1
                _log.warning(
                    "%s: claim %s landed on %s as %s but the log had lost it: recorded now",
                    name,
                    event.subject.partition("/")[2],
                    ref,
                    event.data.get("newOid"),
                )
        return recovered

    def check_commit(
        self,
        repo: str,
        claim_id: str | None,
        paths: Sequence[str],
        *,
        edits: Mapping[str, Edit] | None = None,
        read_edits: Callable[[], Mapping[str, Edit] | None] | None = None,
    ) -> CommitCheck:
        """May ``claim_id`` (or nobody) commit these staged paths? See
        :func:`detente.service.commit_check.check_commit` (the same check, which the local
        hook calls without the write services): its arguments, answer and errors."""
        return check_commit(self.core, repo, claim_id, paths, edits=edits, read_edits=read_edits)

    def check_push(
        self, repo: str, ref: str, commits: Sequence[PushedCommit], *, fast_forward: bool
    ) -> int:
        """Is this update of a protected ref the integration of valid claims?

        Returns:
            The number of commits checked.

        Raises:
            EvidenceRejected: ``evidence_rejected``; ``failures`` lists every reason.
            ValidationError: unknown repository.
        """
        state = self.core.fresh(self.core.repo(repo).name)
        with self.core.lock(repo):
            failures = push_failures(state, ref, commits, fast_forward=fast_forward)
        if failures:
            raise EvidenceRejected(failures, ref=ref)
        return len(commits)

    def record_push(
        self, repo: str, ref: str, old: str, new: str, claim_ids: Sequence[str]
    ) -> list[str]:
        """A checked push to a protected ref landed: integrate the claims it names.

        Returns:
            The ids of the claims that became ``integrated`` (or ``completed``).

        Raises:
            ValidationError: unknown repository.
        """
        name = self.core.repo(repo).name
        with self.core.lock(name):
            _, stored = self.core.execute(
                name, lambda s: decide_pushed(s, ref, old, new, list(claim_ids), self.core.ids)
            )
        return [str(e.data["claimId"]) for e in stored if e.type == "claim.integrated"]
