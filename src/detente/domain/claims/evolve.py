"""The fold of the claim aggregate: claim records by id and the indexes kept in step.

:class:`ClaimBook` is what :attr:`RepoState.claims <detente.domain.state.RepoState.claims>`
holds: a dict ``claim id -> Claim`` that callers only read, updated by
:meth:`ClaimBook.apply` (the ``evolve`` of DESIGN.md). Records are frozen and replaced
on every event; the book itself is updated in place because copying 10,000 claims per
event would make every command O(live claims).

Indexes over the *holding* claims:
    - :attr:`~ClaimBook.path_index`: a :class:`PatternIndex` of their path patterns;
    - :attr:`~ClaimBook.modules` / :attr:`~ClaimBook.symbols` / :attr:`~ClaimBook.contracts`:
      exact value -> claim ids;
    - :attr:`~ClaimBook.memory_holders`: the ids of those that declare memory impacts,
      and :attr:`~ClaimBook.memory_index`, a :class:`PatternIndex` of those impacts' paths;
    - :attr:`~ClaimBook.lookups`: live claims by branch and worktree, the reverse of the
      semantic records, the journal of holding-objective changes
      (:class:`~detente.domain.claims.lookups.ClaimLookups`);
    - a heap of lease deadlines for the expiry sweep (lazy deletion).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from detente.clock import parse_time
from detente.domain import events as ev
from detente.domain.claims.lookups import ClaimLookups
from detente.domain.claims.model import Abandonment, Claim, ClaimStatus, Lease
from detente.domain.claims.record import claim_from_announcement
from detente.domain.claims.wire import (
    contract_from_wire,
    memory_impact_from_wire,
    semantic_from_wire,
)
from detente.domain.overlap.index import PatternIndex


class ClaimBook(dict[str, Claim]):
    """Claims by id with their overlap indexes (see the module docstring).

    Attributes:
        path_index: path patterns of the holding claims.
        modules / symbols / contracts: ``value -> ids`` of the holding claims naming it.
        memory_holders: ids of the holding claims with memory impacts.
        memory_index: the memory impact paths of those claims (key: the claim id).
        last_fencing_token: the highest fencing token granted so far (0 before any).
        lookups: the :class:`ClaimLookups` kept in step with every record.
    """

    def __init__(self, repo: str) -> None:
        self.repo = repo
        super().__init__()
        self.path_index = PatternIndex()
        self.modules: dict[str, set[str]] = {}
        self.symbols: dict[str, set[str]] = {}
        self.contracts: dict[str, set[str]] = {}
        self.memory_holders: set[str] = set()
        self.memory_index = PatternIndex()
        self.last_fencing_token = 0
        #: The highest ask number a scope change recorded (``askedAt``; 0 before any).
        self.last_ask = 0
        #: Workspaces, reverse semantic records, the holding-objective journal.
        self.lookups = ClaimLookups()
        self._deadlines: list[tuple[datetime, str, int]] = []
        #: The highest lease-row stamp folded (:meth:`move_deadline`; 0: none).
        self.lease_stamp = 0
        #: Leases moved by row since the last ``lease.checkpoint`` (claim id -> lease).
        self.unchecked: dict[str, Lease] = {}
        #: When the oldest of :attr:`unchecked` was renewed (None: nothing unchecked).
        self.unchecked_since: datetime | None = None

    # ------------------------------------------------------------------ queries

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
            claim = self.get(claim_id)
            if (
                claim is not None
                and claim.leased
                and claim.lease.revision == lease_rev
                and claim_id not in seen
            ):
                seen.add(claim_id)
                due.append(claim)
        return due

    def checkpoint_due(self, now: datetime, every: timedelta) -> bool:
        """True when a lease moved by row waits for its checkpoint ``every`` or longer."""
        since = self.unchecked_since
        return bool(self.unchecked) and since is not None and now - since >= every

    def _drop_stale_deadlines(self) -> None:
        while self._deadlines:
            _, claim_id, lease_rev = self._deadlines[0]
            claim = self.get(claim_id)
            if claim is not None and claim.leased and claim.lease.revision == lease_rev:
                return
            heapq.heappop(self._deadlines)

    # ------------------------------------------------------------------ evolve

    def move_deadline(
        self, claim_id: str, lease: Lease, *, at: datetime, stamp: int = 0, checked: bool = False
    ) -> bool:
        """Fold a lease moved without an event (a lease row, or an entry of a
        ``lease.checkpoint``): the claim's lease becomes ``lease`` when it extends the same
        lease to a higher revision; nothing else of the record changes (not its revision,
        ``updatedAt`` or ``lastEventId``: a heartbeat is not a change of the claim).

        Args:
            claim_id: the claim.
            lease: its lease after the renewal.
            at: when the renewal was decided.
            stamp: the lease row's store stamp (raises :attr:`lease_stamp`; 0: not a row).
            checked: the move comes from a checkpoint (it clears :attr:`unchecked` up to
                its revision) rather than a row (which waits for one).

        Returns:
            True when the claim's lease moved.
        """
        self.lease_stamp = max(self.lease_stamp, stamp)
        old = self.get(claim_id)
        moved = old is not None and old.lease.id == lease.id and lease.revision > old.lease.revision
        if old is not None and moved:
            self._lease_moved(old.with_lease(lease))
        if checked:
            held = self.unchecked.get(claim_id)
            if held is not None and held.revision <= lease.revision:
                del self.unchecked[claim_id]
        elif moved:
            self.unchecked[claim_id] = lease
            if self.unchecked_since is None:
                self.unchecked_since = at
        return moved

    def _checkpoint(self, data: dict[str, Any], at: datetime) -> None:
        for entry in data["leases"]:
            lease = Lease(
                id=str(entry["leaseId"]),
                revision=int(entry["leaseRevision"]),
                ttl_seconds=int(entry["ttlSeconds"]),
                expires_at=parse_time(str(entry["expiresAt"])),
            )
            self.move_deadline(str(entry["claimId"]), lease, at=at, checked=True)
        self.unchecked_since = at if self.unchecked else None

    def apply(self, event_type: str, data: dict[str, Any], at: datetime, event_id: str) -> None:
        """Fold one ``claim.*`` or ``lease.*`` event; events about unknown claims are ignored."""
        if event_type == ev.LEASE_CHECKPOINT:
            self._checkpoint(data, at)
            return
        if event_type == ev.CLAIM_ANNOUNCED:
            claim = claim_from_announcement(self.repo, data, at, event_id, self)
            self.last_fencing_token = max(self.last_fencing_token, claim.fencing_token)
            self.store(None, claim)
            return
        old = self.get(str(data.get("claimId")))
        if old is None:
            return
        asked = data.get("askedAt")
        if event_type == ev.CLAIM_SCOPE_CHANGED and isinstance(asked, list) and len(asked) == 2:
            self.last_ask = max(self.last_ask, int(asked[1]))
        new = _evolve_claim(old, event_type, data, at, self)
        new = replace(new, revision=old.revision + 1, updated_at=at, last_event_id=event_id)
        self.store(old, new)

    def _lease_moved(self, new: Claim) -> None:
        """:meth:`store` for a copy whose lease alone moved (a heartbeat, every few
        seconds per claim): no index can change (workspace, holding, targets, objective
        and memory impacts are the old record's, and the indexes hold ids), so only the
        record and its new deadline are kept."""
        self[new.id] = new
        if new.leased:
            heapq.heappush(self._deadlines, (new.lease.expires_at, new.id, new.lease.revision))

    def store(self, old: Claim | None, new: Claim) -> None:
        """Replace ``old`` (None: a new claim) by ``new`` and keep the indexes in step."""
        self[new.id] = new
        self.lookups.update(old, new)
        old_holding = old is not None and old.holding
        if (
            old_holding
            and old is not None
            and (
                not new.holding
                or old.paths != new.paths
                or old.pending_paths != new.pending_paths
                or old.carve_outs != new.carve_outs
                or old.modules != new.modules
                or old.symbols != new.symbols
                or old.expected_contract_changes != new.expected_contract_changes
            )
        ):
            self._unindex(old)
            old_holding = False
        if new.holding and not old_holding:
            self._index(new)
        if new.id in self.memory_holders:
            self.memory_holders.discard(new.id)
            self.memory_index.remove_key(new.id)
        if new.holding and new.memory_impacts:
            self.memory_holders.add(new.id)
            for impact in new.memory_impacts:
                self.memory_index.add(new.id, impact.path)
        if new.leased and (old is None or old.lease != new.lease or not old.leased):
            heapq.heappush(self._deadlines, (new.lease.expires_at, new.id, new.lease.revision))

    def _index(self, claim: Claim) -> None:
        for pattern in claim.paths + claim.pending_paths:
            self.path_index.add(claim.id, pattern, claim.carved(pattern))
        for mapping, values in (
            (self.modules, claim.modules),
            (self.symbols, claim.symbols),
            (self.contracts, claim.contract_areas),
        ):
            for value in values:
                mapping.setdefault(value, set()).add(claim.id)

    def _unindex(self, claim: Claim) -> None:
        self.path_index.remove_key(claim.id)
        for mapping, values in (
            (self.modules, claim.modules),
            (self.symbols, claim.symbols),
            (self.contracts, claim.contract_areas),
        ):
            for value in values:
                holders = mapping.get(value)
                if holders is not None:
                    holders.discard(claim.id)
                    if not holders:
                        del mapping[value]


def _evolve_claim(
    claim: Claim, event_type: str, data: dict[str, Any], at: datetime, claims: Mapping[str, Claim]
) -> Claim:
    status = ClaimStatus(data["status"]) if "status" in data else claim.status
    reason = data.get("reason", claim.status_reason)
    if status is ClaimStatus.ACTIVE and not claim.granted:
        claim = replace(claim, granted=True)
    if "takeoverOf" in data:
        claim = replace(claim, takeover=data["takeoverOf"])
    if "successorId" in data:
        claim = replace(claim, successor_id=data["successorId"])
    if event_type in (ev.LEASE_RENEWED, ev.CLAIM_DRAFT_ANNOUNCED):
        lease = Lease(
            id=claim.lease.id,
            revision=int(data["leaseRevision"]),
            ttl_seconds=int(data["ttlSeconds"]),
            expires_at=parse_time(str(data["expiresAt"])),
        )
        return replace(claim, lease=lease, status=status, status_reason=reason)
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
            carve_outs=_carve_outs(claim, data),
            asked=_asked(claim, data),
            modules=tuple(data["modules"]),
            symbols=tuple(data["symbols"]),
            expected_contract_changes=tuple(
                contract_from_wire(c) for c in data["expectedContractChanges"]
            ),
            memory_impacts=(
                tuple(memory_impact_from_wire(m) for m in data["memoryImpacts"])
                if "memoryImpacts" in data
                else claim.memory_impacts
            ),
        )
    if event_type == ev.CLAIM_OBJECTIVE_CHANGED:
        semantic = semantic_from_wire(data.get("semantic"), claims)
        return replace(claim, objective=str(data["objective"]), semantic=semantic)
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


def _asked(claim: Claim, data: dict[str, Any]) -> tuple[int, int] | None:
    """When the pending targets were asked for: the event's ``askedAt`` when it parked
    new ones, else the claim's own while some stay pending."""
    raw = data.get("askedAt")
    if isinstance(raw, list) and len(raw) == 2:
        return (int(raw[0]), int(raw[1]))
    return claim.asked if data["pendingPaths"] else None


def _carve_outs(claim: Claim, data: dict[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The carve-outs after a scope change: as the event says (``carveOuts``, written by a
    split), else the claim's own for the patterns it still holds."""
    held = set(data["paths"]) | set(data["pendingPaths"])
    raw = data.get("carveOuts")
    if not isinstance(raw, dict):
        return tuple((p, cuts) for p, cuts in claim.carve_outs if p in held)
    return tuple(
        (str(p), tuple(str(c) for c in cuts))
        for p, cuts in sorted(raw.items())
        if p in held and cuts
    )
