"""Use cases shared by every adapter (HTTP API, CLI local mode, later MCP and hooks).

Every write follows one path: take the repository's store transaction (which serializes
commands on that repo across threads and processes), catch the cached projection up with
the log, expire leases whose deadline passed, ``decide`` the command, append its events
with the expected stream revisions, fold them into the projection and write the
projection rows in the same transaction, then wake watchers.

Expiry found during a command is committed even when the command itself is refused: a
heartbeat that races its deadline gets ``lease_expired`` *and* leaves the claim
``expired``, never renewed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from detente.clock import Clock, format_time
from detente.domain import decide as d
from detente.domain.analysis import Targets, find_overlaps
from detente.domain.events import Event
from detente.domain.model import Claim, ClaimStatus, Meeting, Overlap
from detente.domain.overlap.globs import intersect
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.state import RepoState
from detente.domain.wire import claim_to_wire, meeting_to_wire, overlap_to_wire
from detente.errors import (
    ConcurrencyError,
    DetenteError,
    InvalidTransition,
    NotFoundError,
    ValidationError,
)
from detente.eventlog.envelope import StoredEvent
from detente.eventlog.projections import AuditReport, apply_stored, rows_for, verify
from detente.eventlog.subscription import Broadcaster
from detente.ids import new_id
from detente.storage.base import NewEvent, Store, StoreTx


@dataclass(frozen=True)
class RepoConfig:
    """A repository the server coordinates. ``path`` is None for path-less test repos."""

    name: str
    path: Path | None = None
    default_branch: str = "main"
    case_insensitive: bool = False


@dataclass(frozen=True)
class ClaimView:
    """A claim with its live overlap report and its meetings."""

    claim: Claim
    overlaps: list[Overlap]
    meetings: list[Meeting] = field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        """``{claim, overlaps[], meeting, meetings[]}`` (``meeting``: the newest open one)."""
        open_meetings = [m for m in self.meetings if m.status.value == "open"]
        return {
            "claim": claim_to_wire(self.claim),
            "overlaps": [overlap_to_wire(o) for o in self.overlaps],
            "meeting": meeting_to_wire(open_meetings[-1]) if open_meetings else None,
            "meetings": [meeting_to_wire(m) for m in self.meetings],
        }


class Service:
    """The coordination plane's use cases over one store.

    Args:
        store: the storage backend.
        clock: the authority on time (lease deadlines).
        repos: repositories served; commands naming another repo get ``validation_error``.
        policy: limits (TTL bounds, meeting deadline).
        ids: id source (``prefix -> id``); injectable for deterministic tests.
        resolve_commit: ``(repo_path, rev) -> full OID``; validates ``baseCommit`` against
            the real repository when the repo has a path.
    """

    def __init__(
        self,
        store: Store,
        clock: Clock,
        repos: Sequence[RepoConfig],
        *,
        policy: d.Policy = d.DEFAULT_POLICY,
        ids: Callable[[str], str] = new_id,
        resolve_commit: Callable[[Path, str], str] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.policy = policy
        self.repos = {r.name: r for r in repos}
        self.broadcaster = Broadcaster()
        self._ids = ids
        self._resolve_commit = resolve_commit
        self._states: dict[str, RepoState] = {}
        self._locks = {name: threading.RLock() for name in self.repos}

    # ------------------------------------------------------------------ plumbing

    def _repo(self, name: str) -> RepoConfig:
        repo = self.repos.get(name)
        if repo is None:
            known = ", ".join(sorted(self.repos)) or "none"
            raise ValidationError(f"unknown repository {name!r} (served: {known})", field="repo")
        return repo

    def _state(self, repo: str) -> RepoState:
        state = self._states.get(repo)
        if state is None:
            state = RepoState(repo, case_insensitive=self.repos[repo].case_insensitive)
            self._states[repo] = state
        return state

    def _catch_up_tx(self, tx: StoreTx, state: RepoState) -> None:
        for event in tx.read_after(state.last_seq, state.repo):
            apply_stored(state, event)

    def _catch_up_read(self, state: RepoState) -> None:
        while True:
            batch = self.store.read(since=state.last_seq, limit=5000, repo=state.repo)
            if not batch:
                return
            for event in batch:
                apply_stored(state, event)

    def _commit(self, tx: StoreTx, state: RepoState, events: Sequence[Event]) -> list[StoredEvent]:
        if not events:
            return []
        at = format_time(self.clock.now())
        expected: dict[str, int] = {}
        for event in events:
            if event.subject in expected:
                continue
            kind, _, record_id = event.subject.partition("/")
            record: Claim | Meeting | None = (
                state.claims.get(record_id) if kind == "claim" else state.meetings.get(record_id)
            )
            expected[event.subject] = record.revision if record is not None else 0
        stored = tx.append(
            [NewEvent(e.id, e.type, e.version, state.repo, e.subject, e.data, at) for e in events],
            expected,
        )
        for stored_event in stored:
            apply_stored(state, stored_event)
        tx.upsert_records(rows_for(state, (e.subject for e in stored)))
        return stored

    def _execute(
        self, repo: str, decide_fn: Callable[[RepoState], list[Event]]
    ) -> tuple[RepoState, list[StoredEvent]]:
        """Run one command under the repo's transaction (see the module docstring)."""
        self._repo(repo)
        with self._locks[repo]:
            for attempt in (1, 2):
                state = self._state(repo)
                refused: DetenteError | None = None
                try:
                    with self.store.transaction(repo) as tx:
                        self._catch_up_tx(tx, state)
                        now = self.clock.now()
                        stored = self._commit(tx, state, d.decide_expiry(state, now, self._ids))
                        try:
                            events = decide_fn(state)
                        except DetenteError as exc:
                            refused = exc
                        else:
                            stored += self._commit(tx, state, events)
                except ConcurrencyError:
                    self._states.pop(repo, None)
                    if attempt == 2:
                        raise
                    continue
                except BaseException:
                    self._states.pop(repo, None)
                    raise
                if stored:
                    self.broadcaster.publish(stored[-1].seq)
                if refused is not None:
                    raise refused
                return state, stored
        raise AssertionError("unreachable")

    def _fresh(self, repo: str) -> RepoState:
        """The repo's projection, caught up with the log and with due leases expired."""
        self._repo(repo)
        with self._locks[repo]:
            state = self._state(repo)
            self._catch_up_read(state)
            due = state.due_for_expiry(self.clock.now())
        if due:
            self._execute(repo, lambda s: [])
        return self._state(repo)

    def _view(self, state: RepoState, claim: Claim) -> ClaimView:
        overlaps = (
            find_overlaps(state, Targets.of(claim), exclude=claim.id) if claim.holding else []
        )
        meetings = [state.meetings[m] for m in claim.meeting_ids if m in state.meetings]
        return ClaimView(claim=claim, overlaps=overlaps, meetings=meetings)

    # ------------------------------------------------------------------ repositories

    def list_repos(self) -> list[RepoConfig]:
        return sorted(self.repos.values(), key=lambda r: r.name)

    # ------------------------------------------------------------------ claims

    def open_claim(self, cmd: d.OpenClaim) -> ClaimView:
        """Announce a claim (API ``POST /v1/claims``).

        Returns:
            The claim (``active``, or ``negotiating`` with its meeting) and its overlaps.

        Raises:
            ValidationError: bad field (``field`` names it), unknown repo or base commit.
        """
        repo = self._repo(cmd.repo)
        base = cmd.base_commit
        if repo.path is not None and self._resolve_commit is not None:
            base = self._resolve_commit(repo.path, cmd.base_commit)
        claim_id = cmd.claim_id or self._ids("clm")
        seeded = replace(cmd, base_commit=base, claim_id=claim_id)
        with self._locks[repo.name]:
            state, _ = self._execute(
                repo.name,
                lambda s: d.decide_open(s, seeded, self.clock.now(), self._ids, self.policy),
            )
            return self._view(state, state.claims[claim_id])

    def get_claim(self, claim_id: str, repo: str | None = None) -> ClaimView:
        """A claim with overlaps recomputed now. Raises ``not_found``."""
        for name in [repo] if repo else sorted(self.repos):
            state = self._fresh(name)
            with self._locks[name]:
                claim = state.claims.get(claim_id)
                if claim is not None:
                    return self._view(state, claim)
        raise NotFoundError(f"no claim {claim_id!r}", claimId=claim_id)

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

    def renew(self, cmd: d.RenewLease) -> ClaimView:
        """Extend the lease only. Raises ``lease_expired``, ``revision_conflict``, ``not_found``."""
        return self._claim_command(
            cmd.claim_id, lambda s: d.decide_renew(s, cmd, self.clock.now(), self._ids, self.policy)
        )

    def change_scope(self, cmd: d.ChangeScope) -> ClaimView:
        """Add/remove targets; re-runs overlap analysis (may move to ``negotiating``)."""
        return self._claim_command(
            cmd.claim_id,
            lambda s: d.decide_scope_change(s, cmd, self.clock.now(), self._ids, self.policy),
        )

    def set_status(self, cmd: d.SetStatus) -> ClaimView:
        """Suspend, resume or abandon. Raises ``invalid_transition`` naming from/to."""
        return self._claim_command(
            cmd.claim_id,
            lambda s: d.decide_status(s, cmd, self.clock.now(), self._ids, self.policy),
        )

    def complete(self, claim_id: str) -> ClaimView:
        """Evidence-gated completion is not available yet: always ``invalid_transition``
        (after ``not_found`` for an unknown claim)."""
        view = self.get_claim(claim_id)
        raise InvalidTransition(
            view.claim.status.value,
            ClaimStatus.INTEGRATED.value,
            "evidence-gated completion and integration are not available in this version; "
            "abandon the claim with its head commit, or integrate by hand",
        )

    # ------------------------------------------------------------------ meetings

    def get_meeting(self, meeting_id: str) -> Meeting:
        for name in sorted(self.repos):
            state = self._fresh(name)
            if meeting_id in state.meetings:
                return state.meetings[meeting_id]
        raise NotFoundError(f"no meeting {meeting_id!r}", meetingId=meeting_id)

    def list_meetings(self, *, repo: str | None = None, status: str | None = None) -> list[Meeting]:
        out: list[Meeting] = []
        for name in [repo] if repo else sorted(self.repos):
            state = self._fresh(name)
            out.extend(
                m for m in state.meetings.values() if status is None or m.status.value == status
            )
        return sorted(out, key=lambda m: (m.created_at, m.id))

    # ------------------------------------------------------------------ leases

    def sweep(self) -> int:
        """Expire every lease past its deadline, in every repo. Returns how many expired.

        Safe to run from any thread at any time (idempotent; serialized per repo).
        """
        expired = 0
        for name in sorted(self.repos):
            with self._locks[name]:
                state = self._state(name)
                self._catch_up_read(state)
                if not state.due_for_expiry(self.clock.now()):
                    continue
                _, stored = self._execute(name, lambda s: [])
                expired += sum(1 for e in stored if e.type == "claim.expired")
        return expired

    # ------------------------------------------------------------------ events and audit

    def events(
        self, *, since: int = 0, limit: int = 100, repo: str | None = None
    ) -> tuple[list[StoredEvent], int]:
        """Events after ``since`` (max ``limit``, 1..1000) and the ``nextSince`` cursor."""
        if repo is not None:
            self._repo(repo)
        if since < 0:
            raise ValidationError("since must be >= 0", field="since")
        if not 1 <= limit <= 1000:
            raise ValidationError("limit must be between 1 and 1000", field="limit")
        batch = self.store.read(since=since, limit=limit, repo=repo)
        return batch, (batch[-1].seq if batch else since)

    def head(self) -> int:
        return self.store.head()[0]

    def audit(self) -> AuditReport:
        """Verify the hash chain and that projections equal a full replay."""
        return verify(self.store, {r.name: r.case_insensitive for r in self.repos.values()})
