"""The projection of one repository's events: claims, meetings, indexes.

:class:`RepoState` is built by folding events with :meth:`RepoState.apply` (the
``evolve`` of DESIGN.md). Records are frozen and replaced on every event; the container
itself is updated in place because copying 10,000 claims per event would make every
command O(live claims). Callers that need to discard a tentative apply rebuild the state
from the log instead.

Indexes kept in step with the records:
    - a :class:`PatternIndex` of the path patterns of every *holding* claim,
    - exact-value maps for modules, symbols and contract areas,
    - a heap of lease deadlines for the expiry sweep (lazy deletion).
"""

from __future__ import annotations

import heapq
from dataclasses import replace
from datetime import datetime
from typing import Any

from detente.clock import parse_time
from detente.domain import events as ev
from detente.domain.agents.evolve import apply_agent_event
from detente.domain.agents.model import AgentSession
from detente.domain.claims.model import Abandonment, Claim, ClaimStatus, Lease
from detente.domain.claims.wire import agent_from_wire, memory_impact_from_wire
from detente.domain.gates.evolve import GATE_EVENT_TYPES, apply_gate_event
from detente.domain.gates.model import GateRegistry
from detente.domain.meetings.evolve import apply_meeting_event
from detente.domain.meetings.model import Meeting
from detente.domain.memory.evolve import apply_memory_event
from detente.domain.memory.model import MemoryRegistry
from detente.domain.overlap.index import PatternIndex


class RepoState:
    """Current state of one repository, folded from its events.

    Attributes:
        repo: repository name.
        case_insensitive: whether paths are compared case-folded (``core.ignorecase``).
        claims / meetings: records by id.
        agents: agent sessions by session id (:mod:`detente.domain.agents.model`).
        memory: registered memory documents (:mod:`detente.domain.memory`).
        gates: patch artifacts and deployment environments (:mod:`detente.domain.gates.evolve`).
        last_fencing_token: the highest fencing token granted so far (0 before any).
        last_seq: global sequence of the last event applied.
    """

    def __init__(self, repo: str, *, case_insensitive: bool = False) -> None:
        self.repo = repo
        self.case_insensitive = case_insensitive
        self.claims: dict[str, Claim] = {}
        self.meetings: dict[str, Meeting] = {}
        self.agents: dict[str, AgentSession] = {}
        self.memory = MemoryRegistry()
        self.gates = GateRegistry()
        self.last_fencing_token = 0
        self.last_seq = 0
        self.path_index = PatternIndex()
        self.modules: dict[str, set[str]] = {}
        self.symbols: dict[str, set[str]] = {}
        self.contracts: dict[str, set[str]] = {}
        self.memory_holders: set[str] = set()
        self.stream_revisions: dict[str, int] = {}
        self.serialized: dict[str, set[str]] = {}
        self.room_of_target: dict[str, str] = {}
        self.rooms_of_claim: dict[str, list[str]] = {}
        self.resolved_pairs: dict[frozenset[str], dict[str, Any]] = {}
        self._deadlines: list[tuple[datetime, str, int]] = []

    # ------------------------------------------------------------------ queries

    def claim(self, claim_id: str) -> Claim | None:
        return self.claims.get(claim_id)

    def due_for_expiry(self, now: datetime) -> list[Claim]:
        """Leased claims whose deadline is at or before ``now``, oldest deadline first."""
        self._drop_stale_deadlines()
        if not self._deadlines or self._deadlines[0][0] > now:
            return []
        due: list[Claim] = []
        seen: set[str] = set()
        for deadline, claim_id, lease_rev in sorted(self._deadlines):
            if deadline > now:
                break
            claim = self.claims.get(claim_id)
            if (
                claim is not None
                and claim.leased
                and claim.lease.revision == lease_rev
                and claim_id not in seen
            ):
                seen.add(claim_id)
                due.append(claim)
        return due

    def _drop_stale_deadlines(self) -> None:
        while self._deadlines:
            _, claim_id, lease_rev = self._deadlines[0]
            claim = self.claims.get(claim_id)
            if claim is not None and claim.leased and claim.lease.revision == lease_rev:
                return
            heapq.heappop(self._deadlines)

    # ------------------------------------------------------------------ evolve

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
        if seq:
            self.last_seq = max(self.last_seq, seq)
        if subject is not None:
            self.stream_revisions[subject] = self.stream_revisions.get(subject, 0) + 1
        if event_type.startswith("meeting."):
            apply_meeting_event(self, event_type, data, at, event_id)
            return
        if event_type.startswith("memory."):
            apply_memory_event(self, event_type, data, at, event_id)
            return
        if event_type.startswith("agent."):
            apply_agent_event(self.agents, self.repo, event_type, data, at=at, event_id=event_id)
            return
        if event_type in GATE_EVENT_TYPES:
            for old_claim, new_claim in apply_gate_event(self, event_type, data, at, event_id):
                self._store_claim(old_claim, new_claim)
            return
        if event_type == ev.CLAIM_ANNOUNCED:
            claim = _claim_from_announcement(self.repo, data, at, event_id)
            self.last_fencing_token = max(self.last_fencing_token, claim.fencing_token)
            self._store_claim(None, claim)
            return
        old = self.claims.get(str(data.get("claimId")))
        if old is None:
            return
        new = _evolve_claim(old, event_type, data, at)
        new = replace(new, revision=old.revision + 1, updated_at=at, last_event_id=event_id)
        self._store_claim(old, new)

    def _store_claim(self, old: Claim | None, new: Claim) -> None:
        self.claims[new.id] = new
        old_holding = old is not None and old.holding
        if (
            old_holding
            and old is not None
            and (
                not new.holding
                or old.paths != new.paths
                or old.pending_paths != new.pending_paths
                or old.modules != new.modules
                or old.symbols != new.symbols
                or old.expected_contract_changes != new.expected_contract_changes
            )
        ):
            self._unindex(old)
            old_holding = False
        if new.holding and not old_holding:
            self._index(new)
        if new.holding:
            self.memory_holders.discard(new.id)
            if new.memory_impacts:
                self.memory_holders.add(new.id)
        else:
            self.memory_holders.discard(new.id)
        if new.leased and (old is None or old.lease != new.lease or not old.leased):
            heapq.heappush(self._deadlines, (new.lease.expires_at, new.id, new.lease.revision))

    def _index(self, claim: Claim) -> None:
        for pattern in claim.paths + claim.pending_paths:
            self.path_index.add(claim.id, pattern)
        for mapping, values in (
            (self.modules, claim.modules),
            (self.symbols, claim.symbols),
            (self.contracts, claim.expected_contract_changes),
        ):
            for value in values:
                mapping.setdefault(value, set()).add(claim.id)

    def _unindex(self, claim: Claim) -> None:
        self.path_index.remove_key(claim.id)
        for mapping, values in (
            (self.modules, claim.modules),
            (self.symbols, claim.symbols),
            (self.contracts, claim.expected_contract_changes),
        ):
            for value in values:
                holders = mapping.get(value)
                if holders is not None:
                    holders.discard(claim.id)
                    if not holders:
                        del mapping[value]


def _claim_from_announcement(repo: str, data: dict[str, Any], at: datetime, event_id: str) -> Claim:
    lease = data["lease"]
    return Claim(
        id=str(data["claimId"]),
        repo=repo,
        objective=str(data["objective"]),
        status=ClaimStatus(data.get("status", ClaimStatus.ANNOUNCED.value)),
        revision=1,
        agent=agent_from_wire(data["agent"]),
        base_commit=str(data["baseCommit"]),
        branch=data.get("branch"),
        worktree=data.get("worktree"),
        paths=tuple(data["paths"]),
        modules=tuple(data.get("modules", ())),
        symbols=tuple(data.get("symbols", ())),
        expected_contract_changes=tuple(data.get("expectedContractChanges", ())),
        test_responsibility=tuple(data.get("testResponsibility", ())),
        deployment_responsibility=data.get("deploymentResponsibility"),
        memory_impacts=tuple(memory_impact_from_wire(m) for m in data.get("memoryImpacts", ())),
        lease=Lease(
            id=str(lease["id"]),
            revision=int(lease["revision"]),
            ttl_seconds=int(lease["ttlSeconds"]),
            expires_at=parse_time(str(lease["expiresAt"])),
        ),
        fencing_token=int(data["fencingToken"]),
        created_at=at,
        updated_at=at,
        last_event_id=event_id,
        advisory=bool(data.get("advisory", False)),
        takeover=data.get("takeoverOf"),
    )


def _evolve_claim(claim: Claim, event_type: str, data: dict[str, Any], at: datetime) -> Claim:
    status = ClaimStatus(data["status"]) if "status" in data else claim.status
    reason = data.get("reason", claim.status_reason)
    if status is ClaimStatus.ACTIVE and not claim.granted:
        claim = replace(claim, granted=True)
    if "takeoverOf" in data:
        claim = replace(claim, takeover=data["takeoverOf"])
    if "successorId" in data:
        claim = replace(claim, successor_id=data["successorId"])
    if event_type == ev.LEASE_RENEWED:
        lease = Lease(
            id=claim.lease.id,
            revision=int(data["leaseRevision"]),
            ttl_seconds=int(data["ttlSeconds"]),
            expires_at=parse_time(str(data["expiresAt"])),
        )
        return replace(claim, lease=lease)
    if event_type == ev.CLAIM_NEGOTIATING:
        joined = [str(m) for m in data.get("meetingIds", [data["meetingId"]])]
        meetings = claim.meeting_ids + tuple(m for m in joined if m not in claim.meeting_ids)
        return replace(claim, status=status, status_reason=reason, meeting_ids=meetings)
    if event_type == ev.CLAIM_SCOPE_CHANGED:
        return replace(
            claim,
            status=status,
            status_reason=reason,
            paths=tuple(data["paths"]),
            pending_paths=tuple(data["pendingPaths"]),
            modules=tuple(data["modules"]),
            symbols=tuple(data["symbols"]),
            expected_contract_changes=tuple(data["expectedContractChanges"]),
            memory_impacts=(
                tuple(memory_impact_from_wire(m) for m in data["memoryImpacts"])
                if "memoryImpacts" in data
                else claim.memory_impacts
            ),
        )
    if event_type == ev.CLAIM_ABANDONED:
        return replace(
            claim,
            status=status,
            status_reason=reason,
            abandonment=Abandonment(
                head_commit=data.get("headCommit"),
                diff_summary=dict(data.get("diffSummary") or {}),
                memory_state=dict(data.get("memoryState") or {}),
                reason=data.get("reason"),
            ),
        )
    return replace(claim, status=status, status_reason=reason)
