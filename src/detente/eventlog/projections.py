"""Projection rows from state, and the audit: chain check plus projection == replay."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from detente.clock import parse_time
from detente.domain.agents.model import agent_to_wire
from detente.domain.claims.model import Claim
from detente.domain.claims.record import claim_to_wire
from detente.domain.events import LEASE_CHECKPOINT
from detente.domain.overlap.trees import TreeSource
from detente.domain.state import RepoState
from detente.eventlog.envelope import GENESIS_HASH, ChainBreak, StoredEvent, verify_link
from detente.eventlog.records import LeaseRow, RecordRow
from detente.eventlog.upcasting import UPCASTERS, Upcasters

if TYPE_CHECKING:  # the audit's checks, imported by the audit only (a read never needs them)
    from detente.domain.gates.model import Environment, Patch
    from detente.domain.invariants import Replay
    from detente.domain.meetings.model import Meeting
    from detente.domain.memory.model import MemoryDocument
    from detente.domain.resources.model import Resource
    from detente.eventlog.audit_marks import AuditMark

#: Called after an audit that found nothing: ``(verified head (seq, hash), repo -> (its
#: replayed state, the hash of its last event))``.
Passed = Callable[[tuple[int, str], dict[str, tuple[RepoState, str]]], None]


class AuditSource(Protocol):
    """What the audit reads: the whole log and the projection rows (every store)."""

    def iter_all(self, *, batch: int = 1000) -> Iterator[StoredEvent]: ...

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]: ...

    def records(self, kind: str, repo: str | None = None) -> list[RecordRow]: ...


def apply_stored(state: RepoState, event: StoredEvent, upcasters: Upcasters = UPCASTERS) -> None:
    """Fold a stored event into ``state``, its payload upcast to the current version.

    Raises:
        StoreError: ``store_unavailable`` for an event version newer than this release.
    """
    event = upcasters.upcast(event)
    state.apply(
        event.type,
        event.data,
        at=parse_time(event.at),
        event_id=event.id,
        seq=event.seq,
        subject=event.subject,
    )


def apply_all(
    state: RepoState, events: Iterable[StoredEvent], upcasters: Upcasters = UPCASTERS
) -> None:
    """Fold ``events`` in order into ``state``, as :func:`apply_stored` one by one would,
    except that a run of consecutive ``lease.checkpoint`` events is folded as one.

    A checkpoint entry only moves a claim's lease to a higher revision of the same lease
    (:meth:`~detente.domain.claims.evolve.ClaimBook.move_deadline`), so of a run only each
    ``(claim, lease)``'s highest revision can move anything: it is folded with the run's
    last event, the others fold no entries (every event still counts: its sequence, its
    stream's revision). The state is the one the events give one by one (the expiry heap
    keeps fewer superseded deadlines). A catch-up over a long quiet spell (1,000 claims
    renewing every 30 s log 1,000 lease entries per 300 s) folded a claim copy per entry:
    10^6 renewals behind the last snapshot were 100,000 copies, now one per claim.

    Raises:
        StoreError: ``store_unavailable`` for an event version newer than this release.
    """
    run: list[StoredEvent] = []
    for event in events:
        if event.type == LEASE_CHECKPOINT:
            run.append(upcasters.upcast(event))
            continue
        if run:
            _apply_checkpoints(state, run)
            run = []
        apply_stored(state, event, upcasters)
    if run:
        _apply_checkpoints(state, run)


def _apply_checkpoints(state: RepoState, run: list[StoredEvent]) -> None:
    if len(run) == 1:
        _apply(state, run[0], run[0].data)
        return
    latest: dict[tuple[str, str], Any] = {}
    for event in run:
        for entry in event.data.get("leases") or ():
            key = (str(entry["claimId"]), str(entry["leaseId"]))
            seen = latest.get(key)
            if seen is None or int(entry["leaseRevision"]) > int(seen["leaseRevision"]):
                latest[key] = entry
    *earlier, last = run
    for event in earlier:
        _apply(state, event, {**event.data, "leases": []})
    _apply(state, last, {**last.data, "leases": list(latest.values())})


def _apply(state: RepoState, event: StoredEvent, data: dict[str, Any]) -> None:
    state.apply(
        event.type,
        data,
        at=parse_time(event.at),
        event_id=event.id,
        seq=event.seq,
        subject=event.subject,
    )


def _claim_row(c: Claim) -> RecordRow:
    return RecordRow("claim", c.id, c.repo, c.revision, c.status.value, claim_to_wire(c))


# The families' encoders load with their first record (a state without meetings, memory
# documents, patches, resources or deployments never imports their modules).


def _meeting_row(m: Meeting) -> RecordRow:
    from detente.domain.meetings.model import meeting_to_wire

    return RecordRow("meeting", m.id, m.repo, m.revision, m.status.value, meeting_to_wire(m))


def _memory_row(d: MemoryDocument) -> RecordRow:
    from detente.domain.memory.model import document_to_wire

    return RecordRow("memory", d.id, d.repo, d.revision, d.doc_class.value, document_to_wire(d))


def _patch_row(p: Patch) -> RecordRow:
    from detente.domain.gates.model import patch_to_wire

    return RecordRow("patch", p.id, p.repo, p.revision, p.status, patch_to_wire(p))


def _resource_row(r: Resource) -> RecordRow:
    from detente.domain.resources.model import resource_to_wire

    status = "full" if not r.free else "open"
    return RecordRow("resource", r.id, r.repo, r.revision, status, resource_to_wire(r))


def _deployment_row(e: Environment) -> RecordRow:
    from detente.domain.gates.model import environment_to_wire

    status = "deployed" if e.current else "configured"
    return RecordRow("deployment", e.id, e.repo, e.revision, status, environment_to_wire(e))


#: Record kinds projected into rows: ``kind -> (records of a state, row of one record)``.
#: The subject of a record's stream is ``<kind>/<id>``. Add a kind here to project it.
KINDS: dict[str, tuple[Callable[[RepoState], Mapping[str, Any]], Callable[[Any], RecordRow]]] = {
    "claim": (lambda s: s.claims, _claim_row),
    "meeting": (lambda s: s.meetings, _meeting_row),
    # Agent sessions: ``status`` (active/departed) depends on the clock, so it is not stored.
    "agent": (
        lambda s: s.agents,
        lambda a: RecordRow(
            "agent", a.session_id, a.repo, a.revision, "registered", agent_to_wire(a)
        ),
    ),
    "memory": (lambda s: s.memory.documents, _memory_row),
    # Patch artifacts: the row leaves the mbox out (it stays in the patch.published event).
    "patch": (lambda s: s.gates.patches, _patch_row),
    # Shared resources: ``full`` while no slot is free.
    "resource": (lambda s: s.resources, _resource_row),
    "deployment": (lambda s: s.gates.environments, _deployment_row),
}


def rows_for(state: RepoState, subjects: Iterable[str]) -> list[RecordRow]:
    """The projection rows of the given subjects (``<kind>/<id>``); unknown kinds skipped."""
    rows: list[RecordRow] = []
    for subject in dict.fromkeys(subjects):
        kind, _, record_id = subject.partition("/")
        if kind not in KINDS:
            continue
        records, to_row = KINDS[kind]
        record = records(state).get(record_id)
        if record is not None:
            rows.append(to_row(record))
    return rows


@dataclass
class AuditReport:
    """Result of ``audit verify``.

    Attributes:
        ok: chain intact and every projection row equals the replay.
        events: events checked.
        head_hash: hash of the last event (GENESIS_HASH when empty).
        broken: the first broken chain link, if any.
        mismatches: projection rows that differ from the replay (``kind/id: why``).
        invariants: protocol invariants the log breaks (:mod:`detente.domain.invariants`):
            status changes off the transition table, resolutions that dropped uncontested
            scope, and the final state's negotiation and authority invariants.
        anchor: what the store's anchors contradict (a rollback, a rewrite at a
            checkpointed event, a landing on a default branch the log lacks:
            :mod:`detente.service.anchor`).
    """

    ok: bool
    events: int
    head_hash: str
    broken: ChainBreak | None = None
    mismatches: list[str] = field(default_factory=list)
    invariants: list[str] = field(default_factory=list)
    anchor: list[str] = field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": self.ok, "events": self.events, "headHash": self.head_hash}
        if self.invariants:
            body["invariantViolations"] = self.invariants
        if self.broken is not None:
            body["brokenAt"] = {"seq": self.broken.seq, "reason": self.broken.reason}
        if self.mismatches:
            body["projectionMismatches"] = self.mismatches
        if self.anchor:
            body["anchorViolations"] = self.anchor
        return body


AUDIT_ROUNDS = 5
"""How often the audit catches up with writes made while it ran before it reports rows
that are newer than its replay (a live server keeps writing during an audit)."""


def verify(
    store: AuditSource,
    case_insensitive: dict[str, bool] | None = None,
    trees: Mapping[str, TreeSource] | None = None,
    leases: Callable[[str], Sequence[LeaseRow]] | None = None,
    *,
    mark: AuditMark | None = None,
    passed: Passed | None = None,
) -> AuditReport:
    """Walk the whole log: check every hash link, replay every repo, compare projections,
    check the protocol invariants (:mod:`detente.domain.invariants`).

    The log is read in pages and the projection rows afterwards, without stopping writers:
    a row written after the replay's last event (a newer revision, or a record the replay
    has not met yet) is not a mismatch but a sign to catch up. The audit then folds the
    log's new tail and compares again, up to :data:`AUDIT_ROUNDS` times; a row that differs
    at the same revision, or that the replay is ahead of, is reported at once.

    Args:
        store: the backend to audit.
        case_insensitive: per-repo path case folding (affects only index building).
        trees: per-repo base-commit trees, so the invariants judge overlap severity as the
            service does (a glob meeting only in paths no base commit has is potential).
        leases: ``repo -> its lease rows`` on a store that keeps them (a renewal there
            appends no event): folded after the replay, as every reader folds them, and
            each checked not to be older than the lease the log names
            (:func:`~detente.eventlog.lease_rows.stale_lease_rows`).
        mark: where the last passing audit stopped (:mod:`detente.eventlog.audit_marks`):
            the chain is checked and the replay folded from there only (None: from zero).
        passed: called when the audit found nothing, to keep its mark.

    Returns:
        An :class:`AuditReport`; ``ok`` is False at the first broken link (the replay
        after a broken link proves nothing) or when any projection row differs.
    """
    audit = _Audit(case_insensitive or {}, trees or {})
    if mark is not None and mark.moved:
        reason = f"the log no longer holds the event {mark.seq} the last audit verified"
        broken: ChainBreak | None = ChainBreak(mark.seq, reason)
        return AuditReport(ok=False, events=0, head_hash=mark.hash, broken=broken)
    if mark is not None:
        audit.resume(mark)
        broken = audit.fold(_tail(store, mark.seq))
    else:
        broken = audit.fold(store.iter_all())
    rounds = 1
    stale: list[str] = []  # lease rows older than the log (checked on the first round)
    while broken is None:
        if leases is not None:
            from detente.eventlog.lease_rows import fold_lease_rows, stale_lease_rows

            for repo, replay in sorted(audit.replays.items()):
                rows = leases(repo)
                if rounds == 1:
                    stale += stale_lease_rows(replay.state, rows)
                fold_lease_rows(replay.state, rows)
        mismatches, behind = audit.compare(store)
        if not behind or rounds >= AUDIT_ROUNDS:
            break
        rounds += 1
        broken = audit.fold(_tail(store, audit.last_seq))
    if broken is not None:
        return AuditReport(ok=False, events=audit.count, head_hash=audit.prev, broken=broken)
    from detente.domain.invariants import state_violations

    invariants = [
        f"{repo}: {v}"
        for repo, r in sorted(audit.replays.items())
        for v in [*r.violations, *state_violations(r.state)]
    ]
    mismatches = stale + mismatches
    ok = not mismatches and not invariants
    if ok and passed is not None:
        passed((audit.last_seq, audit.prev), audit.kept())
    return AuditReport(
        ok=ok,
        events=audit.count,
        head_hash=audit.prev,
        mismatches=mismatches,
        invariants=invariants,
    )


def _tail(store: AuditSource, since: int) -> Iterator[StoredEvent]:
    while chunk := store.read(since=since, limit=1000):
        yield from chunk
        since = chunk[-1].seq


class _Audit:
    """The audit's replay: chain position, one :class:`Replay` per repository."""

    def __init__(self, folded: Mapping[str, bool], trees: Mapping[str, TreeSource]) -> None:
        self.prev, self.last_seq, self.count = GENESIS_HASH, 0, 0
        self.replays: dict[str, Replay] = {}
        self.last_hash: dict[str, str] = {}  # repo -> the hash of its last folded event
        self._folded = folded
        self._trees = trees

    def resume(self, mark: AuditMark) -> None:
        """Continue from a passing audit's mark: its head and its replays."""
        from detente.domain.invariants import Replay

        self.prev, self.last_seq = mark.hash, mark.seq
        for repo, (state, last) in mark.states.items():
            state.trees = self._trees.get(repo)
            self.replays[repo] = Replay(state)
            self.last_hash[repo] = last

    def kept(self) -> dict[str, tuple[RepoState, str]]:
        """Each repository's replay and the hash of its last event."""
        return {repo: (self.replays[repo].state, last) for repo, last in self.last_hash.items()}

    def fold(self, events: Iterable[StoredEvent]) -> ChainBreak | None:
        """Check and fold ``events`` (continuing the chain); the first broken link, if any."""
        for event in events:
            broken = verify_link(event, self.prev, self.last_seq + 1)
            if broken is not None:
                return broken
            replay = self.replays.get(event.repo)
            if replay is None:
                from detente.domain.invariants import Replay

                fresh = RepoState(event.repo, case_insensitive=self._folded.get(event.repo, False))
                fresh.trees = self._trees.get(event.repo)
                replay = self.replays[event.repo] = Replay(fresh)
            current = UPCASTERS.upcast(event)  # the checks see today's shape (as the fold)
            replay.fold(
                current.type, current.data, current.id, partial(apply_stored, event=current)
            )
            self.prev, self.last_seq, self.count = event.hash, event.seq, self.count + 1
            self.last_hash[event.repo] = event.hash
        return None

    def compare(self, store: AuditSource) -> tuple[list[str], bool]:
        """``(mismatches, behind)``: ``behind`` when some row is newer than the replay."""
        mismatches: list[str] = []
        behind = False
        for kind, (records, to_row) in KINDS.items():
            stored = {r.id: r for r in store.records(kind)}
            replayed: dict[str, RecordRow] = {}
            for replay in self.replays.values():
                for record in records(replay.state).values():
                    row = to_row(record)
                    replayed[row.id] = row
            for record_id in sorted(set(stored) | set(replayed)):
                have, want = stored.get(record_id), replayed.get(record_id)
                if have is None:
                    mismatches.append(f"{kind}/{record_id}: missing from the projection")
                elif want is None:
                    behind = True
                    mismatches.append(f"{kind}/{record_id}: in the projection but not in the log")
                elif have.body != want.body or have.revision != want.revision:
                    behind = behind or have.revision > want.revision
                    diff = sorted(
                        k
                        for k in set(have.body) | set(want.body)
                        if have.body.get(k) != want.body.get(k)
                    )
                    mismatches.append(
                        f"{kind}/{record_id}: differs from replay in "
                        f"{', '.join(diff) or 'revision'}"
                    )
        return mismatches, behind
