"""Use cases shared by every adapter (HTTP API, CLI local mode, later MCP and hooks).

Every write follows one path: take the repository's store transaction (which serializes
commands on that repo across threads and processes), catch the cached projection up with
the log, expire leases whose deadline passed, ``decide`` the command, append its events
with the expected stream revisions, fold them into the projection and write the
projection rows in the same transaction, then wake watchers.

Expiry found during a command is committed even when the command itself is refused: a
heartbeat that races its deadline gets ``lease_expired`` *and* leaves the claim
``expired``, never renewed.

Commands that arrive while another holds the repository are batched into one store
transaction (:mod:`detente.service.group_commit`); a projection starts from its newest
snapshot and a failed transaction restarts from a copy of it, never from event 1
(:mod:`detente.service.checkpoints`).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from detente.clock import Clock, format_time
from detente.domain import events as ev
from detente.domain.events import Event
from detente.domain.overlap.trees import Artifact, TreeSource
from detente.domain.policy import DEFAULT_POLICY, Policy
from detente.domain.state import RepoState
from detente.errors import NotFoundError, StoreError, ValidationError
from detente.eventlog.audit_marks import load_mark, save_mark
from detente.eventlog.envelope import StoredEvent
from detente.eventlog.projections import AuditReport, apply_all, apply_stored, rows_for, verify
from detente.eventlog.subscription import Broadcaster
from detente.ids import new_id
from detente.service.batch_effects import BatchEffect
from detente.service.checkpoints import Checkpoints
from detente.service.group_commit import BatchClock, GroupCommit
from detente.service.known_commits import KnownCommits
from detente.service.lease_rows import (
    RenewedRows,
    fold_lease_rows,
    keeps_lease_rows,
    move_leases,
)
from detente.service.repo_index import tree_source
from detente.storage.base import (
    LeaseStore,
    NewEvent,
    SnapshotStore,
    Store,
    StoreTx,
    expiry_batch,
    is_lease_tx,
)

if TYPE_CHECKING:
    from detente.domain.meetings.resolutions import OwnersOf
    from detente.service.anchor import Anchor
    from detente.vcs.refstore import RefStore

_MAX_REACTION_ROUNDS = 16

#: The events :meth:`ServiceCore.sweep` counts: a claim's lease, a resource's grant.
_EXPIRIES = frozenset({"claim.expired", "resource.expired"})

T = TypeVar("T")
E = TypeVar("E", bound=BatchEffect)


@dataclass(frozen=True)
class RepoConfig:
    """A repository the server coordinates. ``path`` is None for path-less test repos.

    ``generated`` and ``artifacts`` come from the served configuration (``[generated]`` of
    ``detente.toml``) and apply at every commit, beside each commit's own declarations.
    ``refs`` stands in for the repository's git refs and commits (a
    :class:`~detente.vcs.fake_refs.FakeRefStore` in replays); None: git at ``path``.
    ``main_worktree`` is the top level of the repository's main worktree, next to which
    claim worktrees go by default (None: next to ``path``).
    """

    name: str
    path: Path | None = None
    default_branch: str = "main"
    case_insensitive: bool = False
    generated: tuple[str, ...] = ()
    artifacts: tuple[Artifact, ...] = ()
    refs: RefStore | None = field(default=None, compare=False)
    main_worktree: Path | None = None


def _resources_due(state: RepoState, now: datetime) -> bool:
    """Whether a grant of a shared resource is past its deadline (a scan: resources are
    few, and most hold one or two grants)."""
    return any(g.expires_at <= now for r in state.resources.values() for g in r.holders)


class ServiceCore:
    """Plumbing shared by every use case: repos, cached projections, the command path.

    Args:
        store: the storage backend.
        clock: the authority on time (lease deadlines).
        repos: repositories served; commands naming another repo get ``validation_error``.
        policy: limits (TTL bounds, meeting deadline).
        ids: id source (``prefix -> id``); injectable for deterministic tests.
        resolve_commit: ``(repo_path, rev) -> full OID``; validates ``baseCommit`` against
            the real repository when the repo has a path.
        commit_check: ``(repo_path, full OID) -> True`` when it surely names a commit, a
            quicker first question than ``resolve_commit`` (see
            :class:`~detente.service.known_commits.KnownCommits`).
    """

    def __init__(
        self,
        store: Store,
        clock: Clock,
        repos: Sequence[RepoConfig],
        *,
        policy: Policy = DEFAULT_POLICY,
        ids: Callable[[str], str] = new_id,
        resolve_commit: Callable[[Path, str], str] | None = None,
        commit_check: Callable[[Path, str], bool | None] | None = None,
    ) -> None:
        self.store = store
        #: The time authority, read once per batch inside one (see :class:`BatchClock`).
        self.clock = BatchClock(clock)
        self.policy = policy
        self.repos = {r.name: r for r in repos}
        self.broadcaster = Broadcaster()
        #: The id source (``prefix -> id``).
        self.ids = ids
        self._resolve_commit = (
            KnownCommits(resolve_commit, check=commit_check) if resolve_commit else None
        )
        self._states: dict[str, RepoState] = {}
        self._locks = {name: threading.RLock() for name in self.repos}
        #: Leases expired per transaction at most (see :meth:`timeouts`).
        self.expiry_batch = expiry_batch(store)
        #: Renewals move lease rows instead of appending events (:mod:`.lease_rows`).
        self.lease_rows = keeps_lease_rows(store)
        #: The record rows renewals last wrote (a renewal rewrites only their lease).
        self.renewed_rows = RenewedRows()
        #: The projections' snapshots (start, retry copies, saves).
        self.checkpoints = Checkpoints(store, self._new_state)
        #: The command queues and batch runner.
        self.group_commit = GroupCommit(self)
        self._effects: dict[str, BatchEffect] = {}
        self._effects_lock = threading.Lock()
        #: The log's signed checkpoints outside the store (:mod:`detente.service.anchor`);
        #: None: not anchored (a test service, a memory store).
        self.anchor: Anchor | None = None
        #: Every repository's fencing counter is at least this (raised on a server's start
        #: above the newest checkpoint's token: :mod:`detente.service.anchoring`).
        self.fencing_floor = 0
        self._compose()

    def _compose(self) -> None:
        """Build what sits on the core (the per-aggregate services); none in the bare core."""

    # ------------------------------------------------------------------ the interface
    # What the per-aggregate services use: name a repository, read its projection, run a
    # command on it, hold its lock while building a view, find the repository of a record.

    def repo(self, name: str) -> RepoConfig:
        """The served repository ``name``. Raises ``validation_error`` (field ``repo``)."""
        repo = self.repos.get(name)
        if repo is None:
            known = ", ".join(sorted(self.repos)) or "none"
            raise ValidationError(f"unknown repository {name!r} (served: {known})", field="repo")
        return repo

    def names(self, repo: str | None = None) -> list[str]:
        """``[repo]`` (checked to be served) when given, else every served repo, sorted."""
        return [self.repo(repo).name] if repo else sorted(self.repos)

    def lock(self, repo: str) -> threading.RLock:
        """The repository's command lock (re-entrant): hold it while reading a projection."""
        return self._locks[repo]

    def base_commit(self, repo: RepoConfig, rev: str) -> str:
        """``rev`` resolved to a full OID in ``repo``'s git repository, when it has one.

        Raises:
            ValidationError: ``baseCommit`` names no commit there.
        """
        if repo.refs is not None:
            return repo.refs.resolve_commit(rev)
        if repo.path is None or self._resolve_commit is None:
            return rev
        return self._resolve_commit(repo.path, rev)

    def find_repo(self, has: Callable[[RepoState], bool]) -> str | None:
        """The first served repository (by name) whose projection ``has`` a record.

        The projection is caught up with the log first (nothing is expired or written).
        Records never leave their repository, so a cached projection that already has the
        record answers without the lock (a command does not wait for a running batch to
        learn where its record lives).
        """
        for name in sorted(self.repos):
            cached = self._states.get(name)
            if cached is not None and has(cached):
                return name
        for name in sorted(self.repos):
            with self._locks[name]:
                state = self._state(name)
                self._catch_up_read(state)
                if has(state):
                    return name
        return None

    def repo_of_claim(self, claim_id: str) -> str:
        """The repository holding claim ``claim_id``. Raises ``not_found``."""
        repo = self.find_repo(lambda state: claim_id in state.claims)
        if repo is None:
            raise NotFoundError(f"no claim {claim_id!r}", claimId=claim_id)
        return repo

    # ------------------------------------------------------------------ plumbing

    def _new_state(self, repo: str) -> RepoState:
        state = RepoState(repo, case_insensitive=self.repos[repo].case_insensitive)
        config = self.repos[repo]
        if config.refs is not None:
            state.trees = config.refs
        elif config.path is not None:
            state.trees = tree_source(config.path, config.generated, config.artifacts)
        return state

    def _state(self, repo: str) -> RepoState:
        state = self._states.get(repo)
        if state is None:
            state = self._states[repo] = self._floored(self.checkpoints.start(repo))
        return state

    def _floored(self, state: RepoState) -> RepoState:
        claims = state.claims
        claims.last_fencing_token = max(claims.last_fencing_token, self.fencing_floor)
        return state

    def raise_fencing_floor(self, floor: int) -> None:
        """No repository grants a fencing token at or below ``floor`` from now on."""
        self.fencing_floor = max(self.fencing_floor, floor)
        for name in sorted(self._states):
            with self._locks[name]:
                self._floored(self._states[name])

    def highest_fencing_token(self) -> int:
        """The highest fencing token the loaded projections (or the floor) know."""
        states = list(self._states.values())
        return max([self.fencing_floor, *(s.claims.last_fencing_token for s in states)])

    # The command path's steps (:class:`~detente.service.command_path.CommandPath`), as the
    # batch runner uses them; call them holding the repository's lock.

    def current_state(self, repo: str) -> RepoState:
        """The cached projection of ``repo`` (from its snapshot on first use)."""
        return self._state(repo)

    def discard(self, repo: str, *, folded: bool) -> None:
        """A transaction failed: when it had folded events it never committed, the state
        restarts from a copy at the newest snapshot (the next transaction folds the tail)."""
        if folded or repo not in self._states:
            self._states[repo] = self._floored(self.checkpoints.copy(repo))

    def committed(self, state: RepoState, *, appended: bool) -> None:
        """A transaction committed: wake watchers, snapshot when due."""
        if appended:
            self.broadcaster.publish(state.last_seq)
            self.checkpoints.after_commit(state)
            if self.anchor is not None and self.anchor.due(state.last_seq):
                from detente.service.anchoring import checkpoint_soon

                checkpoint_soon(self)

    @property
    def effects(self) -> list[BatchEffect]:
        """What commits with every batch (:class:`~detente.service.group_commit.BatchEffect`)."""
        return list(self._effects.values())

    def effect(self, key: str, make: Callable[[], E]) -> E:
        """The batch effect registered under ``key``, made by ``make`` on first use (one
        per core, whichever thread asks first)."""
        with self._effects_lock:
            found = self._effects.get(key)
            if found is None:
                found = self._effects[key] = make()
            return cast("E", found)

    def catch_up_tx(self, tx: StoreTx, state: RepoState) -> None:
        """Fold the log's events after ``state.last_seq`` (read in ``tx``)."""
        apply_all(state, tx.read_after(state.last_seq, state.repo))
        if self.lease_rows and is_lease_tx(tx):
            fold_lease_rows(state, tx.leases_after(state.claims.lease_stamp, state.repo))

    def _catch_up_read(self, state: RepoState) -> None:
        while True:
            batch = self.store.read(since=state.last_seq, limit=5000, repo=state.repo)
            if not batch:
                break
            apply_all(state, batch)
        if self.lease_rows and isinstance(self.store, LeaseStore):
            fold_lease_rows(state, self.store.leases_after(state.claims.lease_stamp, state.repo))

    def commit_events(
        self, tx: StoreTx, state: RepoState, events: Sequence[Event]
    ) -> list[StoredEvent]:
        """Append ``events`` and the reactions they trigger (bounded), folding each round.

        Every event's payload records an ``actor`` (``data.actor``, covered by the chain):
        a command's events carry their principal's (stamped by :meth:`run`), the
        reactions they trigger inherit it, and timeouts record ``system``.
        """
        from detente.security.identity import SYSTEM

        at = format_time(self.clock.now())
        out: list[StoredEvent] = []
        batch = list(events)
        if self.lease_rows:  # renewals move lease rows: no event (reactions never renew)
            batch = move_leases(tx, state, batch, self.clock.now(), self.renewed_rows)
        actor = next((e.data["actor"] for e in batch if "actor" in e.data), SYSTEM.to_wire())
        for _ in range(_MAX_REACTION_ROUNDS):
            if not batch:
                return out
            expected = {e.subject: state.revision_of(e.subject) for e in batch}
            stored = tx.append(
                [
                    NewEvent(
                        e.id,
                        e.type,
                        e.version,
                        state.repo,
                        e.subject,
                        e.data if "actor" in e.data else {**e.data, "actor": actor},
                        at,
                    )
                    for e in batch
                ],
                expected,
            )
            for stored_event in stored:
                apply_stored(state, stored_event)
            tx.upsert_records(rows_for(state, (e.subject for e in stored)))
            out += stored
            if all(e.type.startswith(ev.AGENT_PREFIX) for e in stored):
                return out  # a session's records name no claim and no room: nothing reacts
            from detente.domain.meetings.reactions import react  # writes that may move claims

            batch = react(
                state, [(e.type, e.data) for e in stored], self.ids, self.clock.now(), self.policy
            )
        raise StoreError("reactions did not settle; refusing to loop (a bug: please report it)")

    def owners_of(self, repo: str) -> OwnersOf:
        """CODEOWNERS lookup for ``repo`` (read from its working tree when needed)."""
        path = self.repos[repo].path

        def lookup(paths: Sequence[str]) -> tuple[list[str], list[str]]:
            from detente.security import codeowners

            return codeowners.load(path).owners_of(paths)

        return lookup

    def timeouts(self, state: RepoState) -> tuple[list[Event], bool]:
        """Leases past their deadline expire; open meetings past theirs escalate (now).

        At most :attr:`expiry_batch` leases expire in one transaction (a store bounds the
        size of one: etcd's ``--max-txn-ops``); the flag says more are still due.
        """
        # The deciding modules load when something is due (a read, or a write that finds
        # nothing due, the common case of a CLI or hook call, never imports them).
        if not self._due(state):
            return [], False
        from detente.domain.claims.decide import decide_expiry, decide_lease_checkpoint
        from detente.domain.meetings.decide import decide_deadlines, due_meetings

        now = self.clock.now()
        # Leases moved by row since the last checkpoint, named in the log first.
        expired = decide_lease_checkpoint(state, now, self.ids, self.policy)
        expired += decide_expiry(state, now, self.ids)
        if len(expired) > self.expiry_batch:
            return expired[: self.expiry_batch], True
        if _resources_due(state, now):
            # Shared resources' grants expire with the waiters they let in, on a state
            # with the claims' expiries folded (next round when there were some).
            if expired:
                return expired, True
            from detente.domain.resources.expiry import decide_resource_expiry

            return decide_resource_expiry(state, now, self.ids), True
        if not due_meetings(state, now):
            return expired, False
        if expired:  # escalate on the state with these expiries folded in (next round)
            return expired, True
        return decide_deadlines(state, now, self.ids, self.owners_of(state.repo)), False

    def _due(self, state: RepoState) -> bool:
        now = self.clock.now()
        every = timedelta(seconds=self.policy.lease_checkpoint_seconds)
        if state.claims.checkpoint_due(now, every):
            return True
        return (
            bool(state.claims.due_for_expiry(now))
            or _resources_due(state, now)
            or _deadline_passed(state, now)
        )

    def execute(
        self, repo: str, decide_fn: Callable[[RepoState], list[Event]]
    ) -> tuple[RepoState, list[StoredEvent]]:
        """Run one command under the repo's transaction (see the module docstring).

        Args:
            repo: a served repository.
            decide_fn: ``state -> events``; a :class:`DetenteError` it raises is re-raised
                after the timeouts found on the way are committed.

        Returns:
            The projection after the command's batch (hold :meth:`lock` while reading it)
            and the events stored for the command (timeouts and reactions included).
        """
        stored: list[StoredEvent] = self.run(repo, decide_fn, lambda state, events: events)
        return self._state(repo), stored

    def run(
        self,
        repo: str,
        decide_fn: Callable[[RepoState], list[Event]],
        view: Callable[[RepoState, list[StoredEvent]], T],
        *,
        renewal: bool = False,
    ) -> T:
        """Run one command, group-committed with the others waiting on ``repo``.

        Args:
            repo: a served repository.
            decide_fn: ``state -> events`` (pure; refusals raise a :class:`DetenteError`).
            view: ``(state right after this command, the events stored for it) -> the
                answer``; runs inside the batch, so it sees this command's effect and no
                later one's. Call without holding :meth:`lock` (holding it, the command
                runs alone).
            renewal: the command only moves a lease (a hint for the store: see
                :class:`~detente.storage.base.OptimisticStore`).

        Returns:
            What ``view`` returned, once the batch committed.

        Raises:
            DetenteError: the refusal ``decide_fn`` raised (timeouts found on the way are
                committed), or ``store_unavailable``/``store_concurrency`` for its batch.
        """
        from detente.security.identity import current_principal

        self.repo(repo)
        # The principal is read here, in the caller's context: the batch may run on
        # another command's thread.
        actor = current_principal().actor.to_wire()

        def stamped(state: RepoState) -> list[Event]:
            # Built directly: dataclasses.replace walks the fields (a heartbeat pays it).
            return [
                Event(e.id, e.type, e.subject, {**e.data, "actor": actor}, e.version)
                for e in decide_fn(state)
            ]

        answer: T = self.group_commit.submit(repo, stamped, view, renewal=renewal)
        return answer

    def save_snapshots(self, *, min_tail: int = 1) -> None:
        """Snapshot every repository whose projection is ``min_tail`` or more events past
        its last snapshot (a clean shutdown calls this; failures are logged, not raised)."""
        for name in sorted(self._states):
            with self._locks[name]:
                state = self._states.get(name)
                if state is None:
                    continue
                try:
                    self._catch_up_read(state)
                except StoreError:
                    continue  # the store is gone: the last snapshot stays
                self.checkpoints.save_all({name: state}, min_tail=min_tail)

    def start_anchor(self) -> None:
        """A server starts: raise the fencing floor, checkpoint the head
        (:func:`detente.service.anchoring.start_anchor`; no-op when not anchored)."""
        if self.anchor is not None:
            from detente.service.anchoring import start_anchor

            start_anchor(self)

    def stop_anchor(self) -> None:
        """A server stops cleanly: the last checkpoint (no-op when not anchored)."""
        if self.anchor is not None:
            from detente.service.anchoring import stop_anchor

            stop_anchor(self)

    def fresh(self, repo: str) -> RepoState:
        """The repo's projection, caught up with the log and with due leases expired.

        Raises:
            ValidationError: ``repo`` is not served.
        """
        self.repo(repo)
        with self._locks[repo]:
            state = self._state(repo)
            self._catch_up_read(state)
            due = self._due(state)
        if due:
            self.execute(repo, lambda s: [])
        return self._state(repo)

    # ------------------------------------------------------------------ repositories

    def list_repos(self) -> list[RepoConfig]:
        return sorted(self.repos.values(), key=lambda r: r.name)

    # ------------------------------------------------------------------ leases

    def sweep(self) -> int:
        """Expire leases and escalate meetings past their deadline, in every repo.

        Returns:
            How many claims and shared resources' grants expired.

        Safe to run from any thread at any time (idempotent; serialized per repo).
        """
        expired = 0
        for name in sorted(self.repos):
            with self._locks[name]:
                state = self._state(name)
                self._catch_up_read(state)
                if not self._due(state):
                    continue
                _, stored = self.execute(name, lambda s: [])
                expired += sum(1 for e in stored if e.type in _EXPIRIES)
        return expired

    # ------------------------------------------------------------------ events and audit

    def events(
        self, *, since: int = 0, limit: int = 100, repo: str | None = None
    ) -> tuple[list[StoredEvent], int]:
        """Events after ``since`` (max ``limit``, 1..1000) and the ``nextSince`` cursor."""
        if repo is not None:
            self.repo(repo)
        if since < 0:
            raise ValidationError("since must be >= 0", field="since")
        if not 1 <= limit <= 1000:
            raise ValidationError("limit must be between 1 and 1000", field="limit")
        batch = self.store.read(since=since, limit=limit, repo=repo)
        return batch, (batch[-1].seq if batch else since)

    def head(self) -> int:
        return self.store.head()[0]

    def audit(self, *, full: bool = False) -> AuditReport:
        """Verify the hash chain, that projections equal a replay and, when the log is
        anchored, the store against its checkpoints and the branches' landings.

        Args:
            full: replay from event 1; otherwise from where the last passing audit stopped
                (kept in the store's snapshot slots: :mod:`detente.eventlog.audit_marks`),
                checking the chain and folding only the new events (from zero when no
                usable mark is kept).
        """
        trees: dict[str, TreeSource] = {}
        for r in self.repos.values():
            if r.refs is not None:
                trees[r.name] = r.refs
            elif r.path is not None:
                trees[r.name] = tree_source(r.path, r.generated, r.artifacts)
        store = self.store
        folding = {r.name: r.case_insensitive for r in self.repos.values()}
        marks = store if isinstance(store, SnapshotStore) else None
        mark = None if full or marks is None else load_mark(marks, folding)
        report = verify(
            store,
            folding,
            trees,
            mark=mark,
            passed=None if marks is None else partial(save_mark, marks),
            leases=(
                partial(store.leases_after, 0)
                if self.lease_rows and isinstance(store, LeaseStore)
                else None
            ),
        )
        if self.anchor is None:
            return report
        from detente.service.anchoring import anchor_findings

        found = anchor_findings(self)
        return dataclasses.replace(report, ok=report.ok and not found, anchor=found)


def _deadline_passed(state: RepoState, now: datetime) -> bool:
    """Is an open meeting past its deadline (the earliest one read, not every room)?"""
    if not state.has_meetings():  # none recorded: the meeting family stays unloaded
        return False
    first = state.meetings.first_deadline()
    return first is not None and first <= now
