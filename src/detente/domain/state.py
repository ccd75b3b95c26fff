"""The projection of one repository's events: the aggregates' states, composed.

:class:`RepoState` is built by folding events with :meth:`RepoState.apply` (the
``evolve`` of DESIGN.md), which hands each event to the fold of the aggregate that owns
its type:

============================  ====================================================
``claim.*``, ``lease.*``       :class:`~detente.domain.claims.evolve.ClaimBook`
``meeting.*``                  :class:`~detente.domain.meetings.evolve.MeetingBook`
``agent.*``                    :func:`~detente.domain.agents.evolve.apply_agent_event`
``resource.*``                 :func:`~detente.domain.resources.evolve.apply_resource_event`
                               (its grants' fencing tokens raise the claims' counter:
                               one monotonic counter per repository)
``memory.*``                   :func:`~detente.domain.memory.evolve.apply_memory_event`
gate events (evidence,         :func:`~detente.domain.gates.evolve.apply_gate_event`
integration, patches,          (the claim records it changes go back through
deployments)                   :meth:`ClaimBook.store`)
``claim.merge_checked``,       :class:`~detente.domain.checks.model.CheckBook`
``claim.drifted``              (advisories on their own ``checks/<id>`` streams)
============================  ====================================================

The state is updated in place; callers that need to discard a tentative apply rebuild it
from the log instead.

The meeting, memory, gate and check families are loaded on first use: a process whose
repository's log holds none of their records (a hook call before an edit, in local
mode) never imports their modules (docs/performance.md, "Hook calls without generated
classes").
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from detente.domain import events as ev
from detente.domain.agents.evolve import apply_agent_event
from detente.domain.claims.evolve import ClaimBook

if TYPE_CHECKING:
    from detente.domain.agents.model import AgentSession
    from detente.domain.checks.model import CheckBook
    from detente.domain.gates.model import GateRegistry
    from detente.domain.meetings.evolve import MeetingBook
    from detente.domain.memory.model import MemoryRegistry
    from detente.domain.overlap.trees import TreeSource
    from detente.domain.resources.model import Resource


class RepoState:
    """Current state of one repository, folded from its events.

    Attributes:
        repo: repository name.
        case_insensitive: whether paths are compared case-folded (``core.ignorecase``).
        claims: claim records and their overlap indexes (:class:`ClaimBook`).
        meetings: meeting records and their room indexes (:class:`MeetingBook`).
        agents: agent sessions by session id.
        memory: registered memory documents.
        gates: patch artifacts and deployment environments.
        resources: shared resources (counted leases) by id ``<repo>:<name>``.
        checks: each claim's newest merge check and drift (advisories).
        last_seq: global sequence of the last event applied.
        stream_revisions: events applied so far per subject (stream).
        trees: base-commit trees for tree-aware overlap severity (None: unknown).
    """

    def __init__(self, repo: str, *, case_insensitive: bool = False) -> None:
        self.repo = repo
        self.case_insensitive = case_insensitive
        self.claims = ClaimBook(repo)
        self.agents: dict[str, AgentSession] = {}
        self.resources: dict[str, Resource] = {}
        self._meetings: MeetingBook | None = None
        self._memory: MemoryRegistry | None = None
        self._gates: GateRegistry | None = None
        self._checks: CheckBook | None = None
        self.last_seq = 0
        self.stream_revisions: dict[str, int] = {}
        # Base-commit trees for tree-aware severity; set by the service (None: unknown).
        self.trees: TreeSource | None = None
        #: Events folded by this object (stored or not): a fold changes it, so a value
        #: derived from the state and this number is current while they match.
        self.folds = 0
        #: ``(folds, lease stamp, claim id -> (claim, its overlaps))``: the overlap
        #: analyses of the claims asked since the last fold
        #: (:func:`detente.domain.overlap.remembered.claim_overlaps`); never pickled.
        self.overlap_memo: tuple[int, int, dict[str, tuple[Any, list[Any]]]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "overlap_memo": None}

    @property
    def meetings(self) -> MeetingBook:
        """Meeting records and their room indexes (loaded on first use)."""
        if self._meetings is None:
            from detente.domain.meetings.evolve import MeetingBook

            self._meetings = MeetingBook(self.repo)
        return self._meetings

    @property
    def memory(self) -> MemoryRegistry:
        """Registered memory documents (loaded on first use)."""
        if self._memory is None:
            from detente.domain.memory.model import MemoryRegistry

            self._memory = MemoryRegistry()
        return self._memory

    @property
    def gates(self) -> GateRegistry:
        """Patch artifacts and deployment environments (loaded on first use)."""
        if self._gates is None:
            from detente.domain.gates.model import GateRegistry

            self._gates = GateRegistry()
        return self._gates

    @property
    def checks(self) -> CheckBook:
        """Each claim's newest merge check and drift (loaded on first use)."""
        if self._checks is None:
            from detente.domain.checks.model import CheckBook

            self._checks = CheckBook()
        return self._checks

    def has_meetings(self) -> bool:
        """Whether any meeting was recorded (False without loading the meeting family)."""
        return bool(self._meetings)

    def has_memory(self) -> bool:
        """Whether any memory document was registered (False without loading the family)."""
        return self._memory is not None and bool(self._memory.documents)

    def revision_of(self, subject: str) -> int:
        """Events applied so far on ``subject`` (0 for a stream that does not exist yet)."""
        return self.stream_revisions.get(subject, 0)

    def apply(
        self,
        event_type: str,
        data: dict[str, Any],
        *,
        at: datetime,
        event_id: str,
        seq: int = 0,
        subject: str | None = None,
    ) -> None:
        """Fold one event into the state.

        Args:
            event_type: a type from :mod:`detente.domain.events`; unknown types are ignored
                (forward compatibility: a newer server's events do not break an older reader).
            data: the event payload.
            at: when the event was recorded (UTC).
            event_id: the event's id (kept as the record's ``lastEventId``).
            seq: its global sequence number, if stored.
            subject: its stream; counted in :attr:`stream_revisions`.
        """
        self.folds += 1
        if seq:
            self.last_seq = max(self.last_seq, seq)
        if subject is not None:
            self.stream_revisions[subject] = self.stream_revisions.get(subject, 0) + 1
        if event_type.startswith("meeting."):
            self.meetings.apply(event_type, data, at, event_id)
        elif event_type.startswith("memory."):
            from detente.domain.memory.evolve import apply_memory_event

            apply_memory_event(self, event_type, data, at, event_id)
        elif event_type.startswith("agent."):
            apply_agent_event(self.agents, self.repo, event_type, data, at=at, event_id=event_id)
        elif event_type.startswith("resource."):
            from detente.domain.resources.evolve import apply_resource_event

            token = apply_resource_event(
                self.resources, self.repo, event_type, data, at=at, event_id=event_id
            )
            self.claims.last_fencing_token = max(self.claims.last_fencing_token, token)
        elif event_type.startswith("principal."):
            return  # the key registry's audit trail: no projected state
        elif event_type in ev.CHECK_EVENT_TYPES:
            self.checks.apply(event_type, data, at)
        elif event_type in ev.GATE_EVENT_TYPES:
            from detente.domain.gates.evolve import apply_gate_event

            for old_claim, new_claim in apply_gate_event(self, event_type, data, at, event_id):
                self.claims.store(old_claim, new_claim)
        else:
            self.claims.apply(event_type, data, at, event_id)
