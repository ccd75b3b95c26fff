"""The fold of the meeting aggregate: meeting records by id and the indexes kept in step.

:class:`MeetingBook` is what :attr:`RepoState.meetings
<detente.domain.state.RepoState.meetings>` holds: a dict ``meeting id -> Meeting`` that
callers only read, updated by :meth:`MeetingBook.apply`. Besides the records it keeps
the derived indexes the domain consults:

- ``serialized``: ``first claim id -> claim ids waiting behind it`` (serialize);
- ``resolved_pairs``: ``frozenset({a, b}) -> settlement`` for every pair of claims a
  meeting resolution covers, so overlap reports and write checks honour the outcome;
- ``room_of_target``: ``held target -> open meeting id``, so a newcomer finds the room
  negotiating its target without scanning every meeting;
- ``rooms_of_claim``: ``claim id -> meeting ids it sits in``, in the order it joined;
- the open meetings' deadlines in a heap (:meth:`MeetingBook.first_deadline`), so the
  check for a room past its deadline before every command does not read every room.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from itertools import combinations
from typing import Any

from detente.clock import format_time, parse_time
from detente.domain import events as ev
from detente.domain.meetings.model import (
    ContestedTarget,
    Decided,
    Dissolved,
    Meeting,
    MeetingStatus,
    Proposal,
    Settlement,
    decided_from_wire,
    options_for,
)
from detente.domain.overlap.model import OverlapKind


def _targets(data: dict[str, Any]) -> tuple[ContestedTarget, ...]:
    return tuple(
        ContestedTarget(
            target=str(t["target"]),
            claim_ids=tuple(str(c) for c in t["claimIds"]),
            reason=str(t["reason"]),
            kind=_kind(str(t["reason"])),
        )
        for t in data.get("contestedTargets", ())
    )


def _kind(reason: str) -> str:
    """The overlap kind a contested target's reason starts with (``<kind> overlap: ...``,
    :func:`detente.domain.meetings.decide.meeting_events_for`); ``path`` otherwise."""
    head, sep, _ = reason.partition(" overlap:")
    return head if sep and head in _KINDS else "path"


_KINDS = frozenset(k.value for k in OverlapKind)


def _merge(old: Meeting, new: tuple[ContestedTarget, ...]) -> Meeting:
    """``old`` with ``new`` contested targets merged in, keyed by target: a joining claim
    adds its id to an existing one, a new target goes last. The record's derived
    indexes (positions, wire entries, targets naming one claim) are ``old``'s copied and
    updated for the targets ``new`` touches: O(len(new)) Python steps, not one per
    target of the room (the copies are C loops)."""
    positions = dict(old.target_positions)
    merged = list(old.contested_targets)
    wire = list(old.targets_wire)
    solo = dict(old.solo_targets)
    for t in new:
        at = positions.get(t.target)
        if at is None:
            at = positions[t.target] = len(merged)
            merged.append(t)
            wire.append(t.wire)
        else:
            have = merged[at]
            t = merged[at] = replace(have, claim_ids=_united(have.claim_ids, t.claim_ids))
            wire[at] = t.wire
        if len(t.claim_ids) == 1:
            solo[t.target] = t.claim_ids[0]
        else:
            solo.pop(t.target, None)
    record = replace(old, contested_targets=tuple(merged))
    derived = record.__dict__
    derived["target_positions"], derived["targets_wire"], derived["solo_targets"] = (
        positions,
        wire,
        solo,
    )
    return record


def _united(have: tuple[str, ...], more: tuple[str, ...]) -> tuple[str, ...]:
    """``tuple(sorted({*have, *more}))``, sorting ``have`` (already sorted when it came
    from a merge) followed by the few ids ``more`` adds: a nearly sorted run that
    ``sorted`` merges in about one pass, for a target hundreds of claims contest."""
    known = set(have)
    added = {c for c in more if c not in known}
    return tuple(sorted((*(have if len(known) == len(have) else known), *added)))


class MeetingBook(dict[str, Meeting]):
    """Meetings by id with the indexes of the module docstring."""

    def __init__(self, repo: str) -> None:
        super().__init__()
        self.repo = repo
        self.serialized: dict[str, set[str]] = {}
        self.room_of_target: dict[str, str] = {}
        self.rooms_of_claim: dict[str, list[str]] = {}
        self.resolved_pairs: dict[frozenset[str], Settlement] = {}
        #: The ids of the meetings that are ``open`` (deadline checks read only these).
        self.open_ids: set[str] = set()
        #: ``(deadline, meeting id)`` pushed for each open meeting's deadline as it
        #: was set; an entry whose meeting closed or moved its deadline is stale and
        #: dropped when it reaches the top (:meth:`first_deadline`).
        self._deadlines: list[tuple[datetime, str]] = []
        self._pushed: dict[str, datetime] = {}
        #: ``open meeting id -> its targets another room had mapped`` when it last
        #: mapped them (:func:`_map_targets` retries these, not every target).
        self._unmapped: dict[str, set[str]] = {}

    def first_deadline(self) -> datetime | None:
        """The earliest deadline of an open meeting (aware UTC), None when none is
        open: amortised O(log n) per deadline set, not a read of every open room."""
        heap = self._deadlines
        while heap:
            deadline, meeting_id = heap[0]
            meeting = self.get(meeting_id)
            if (
                meeting is not None
                and meeting.status is MeetingStatus.OPEN
                and meeting.deadline == deadline
            ):
                return deadline
            heapq.heappop(heap)
            if self._pushed.get(meeting_id) == deadline:
                del self._pushed[meeting_id]
        return None

    def apply(self, event_type: str, data: dict[str, Any], at: datetime, event_id: str) -> None:
        """Fold one ``meeting.*`` event (see :mod:`detente.domain.events`)."""
        meeting_id = str(data["meetingId"])
        if event_type == ev.MEETING_OPENED:
            self[meeting_id] = Meeting(
                id=meeting_id,
                repo=self.repo,
                status=MeetingStatus.OPEN,
                revision=1,
                participants=tuple(str(p) for p in data["participants"]),
                options=options_for(tuple(str(p) for p in data["participants"]), _targets(data)),
                contested_targets=_targets(data),
                deadline=parse_time(str(data["deadline"])),
                created_at=at,
                updated_at=at,
                last_event_id=event_id,
                requested_by=str(data["requestedBy"]) if data.get("requestedBy") else None,
                merge_conflicts=tuple(dict(c) for c in data.get("mergeConflicts", ())),
            )
            _index_rooms(self, self[meeting_id])
            return
        old = self.get(meeting_id)
        if old is None:
            return
        new = _evolve(self, old, event_type, data, at)
        record = self[meeting_id] = replace(
            new, revision=old.revision + 1, updated_at=at, last_event_id=event_id
        )
        _carry_caches(new if new is not old else old, record)
        _index_rooms(self, record, old, event_type == ev.MEETING_JOINED)


def _carry_caches(before: Meeting, after: Meeting) -> None:
    """Give ``after`` the derived sets ``before`` computed over the same parties and
    targets (the same tuples): a proposal, a notice or a join's own record keeps them."""
    cached = before.__dict__
    if after.participants is before.participants and "party_set" in cached:
        after.__dict__["party_set"] = cached["party_set"]
    if after.contested_targets is before.contested_targets:
        for name in ("target_positions", "targets_wire", "solo_targets", "solo_claims"):
            if name in cached:
                after.__dict__[name] = cached[name]


def _index_rooms(
    book: MeetingBook, meeting: Meeting, old: Meeting | None = None, joined: bool = False
) -> None:
    """Keep the indexes in step with ``meeting``; ``old``, its record before, when the
    status stayed: only what changed is indexed (a party joining a crowded room)."""
    if meeting.status is MeetingStatus.OPEN:
        book.open_ids.add(meeting.id)
        if book._pushed.get(meeting.id) != meeting.deadline:
            book._pushed[meeting.id] = meeting.deadline
            heapq.heappush(book._deadlines, (meeting.deadline, meeting.id))
    else:
        book.open_ids.discard(meeting.id)
    same = old is not None and old.status is meeting.status
    parties: Iterable[str] = meeting.participants
    if same and old is not None:
        known = len(old.participants)
        if meeting.participants[:known] == old.participants:  # a join appends
            parties = meeting.participants[known:]
        else:
            had = old.party_set  # indexed with the record before
            parties = [c for c in meeting.participants if c not in had]
    for claim_id in parties:
        rooms = book.rooms_of_claim.setdefault(claim_id, [])
        if meeting.id not in rooms:
            rooms.append(meeting.id)
    if meeting.status is MeetingStatus.OPEN:
        _map_targets(book, meeting, old if same else None, joined)
    else:
        book._unmapped.pop(meeting.id, None)
        for target in meeting.contested_targets:
            if book.room_of_target.get(target.target) == meeting.id:
                del book.room_of_target[target.target]


def _map_targets(book: MeetingBook, meeting: Meeting, old: Meeting | None, joined: bool) -> None:
    """Map each target of the open ``meeting`` to it unless another room has it (what
    ``setdefault`` over every target does), visiting only the targets it has not mapped
    yet when ``old`` (its open record before) keeps its targets' order: those another
    room held when it last tried (``book._unmapped``) and, after a join (``joined``),
    the ones the join appended. An opening or a departure visits every target."""
    targets = meeting.contested_targets
    pending = book._unmapped.get(meeting.id, ())
    if old is not None and targets is old.contested_targets:
        names = list(pending)
    elif old is not None and joined:  # a join keeps the order and appends (_merge)
        names = [*pending, *(t.target for t in targets[len(old.contested_targets) :])]
    else:
        names = [t.target for t in targets]
    left = set()
    for name in names:
        if book.room_of_target.setdefault(name, meeting.id) != meeting.id:
            left.add(name)
    if left:
        book._unmapped[meeting.id] = left
    else:
        book._unmapped.pop(meeting.id, None)


def _evolve(
    book: MeetingBook, old: Meeting, event_type: str, data: dict[str, Any], at: datetime
) -> Meeting:
    if event_type == ev.MEETING_JOINED:
        claim_id = str(data["claimId"])
        joined = (claim_id,) if claim_id not in old.party_set else ()
        merged = _merge(old, _targets(data))
        parties = old.participants + joined
        new = replace(
            merged,
            participants=parties,
            options=options_for(parties, merged.contested_targets),
            merge_conflicts=old.merge_conflicts
            + tuple(dict(c) for c in data.get("mergeConflicts", ())),
        )
        # The record's derived indexes, from the one before (a join appends).
        _carry_caches(merged, new)
        new.__dict__["party_set"] = old.party_set | set(joined) if joined else old.party_set
        return new
    if event_type == ev.MEETING_PROPOSAL_ADDED:
        proposal = Proposal(
            id=str(data["proposalId"]),
            claim_id=str(data["claimId"]),
            decided=decided_from_wire(data["resolution"]),
            affected=tuple(str(c) for c in data["affected"]),
            accepted_by=tuple(str(c) for c in data["acceptedBy"]),
            status="open",
            at=at,
        )
        return replace(old, proposals=(*old.proposals, proposal))
    if event_type == ev.MEETING_PROPOSAL_ACCEPTED:
        return replace(
            old,
            proposals=tuple(
                replace(p, accepted_by=(*p.accepted_by, str(data["claimId"])))
                if p.id == data["proposalId"]
                else p
                for p in old.proposals
            ),
        )
    if event_type == ev.MEETING_RESOLVED:
        decided = decided_from_wire(data["resolution"])
        _index_resolution(book, old.id, decided)
        proposals = tuple(
            replace(p, status="accepted" if p.id == data.get("proposalId") else "superseded")
            if p.status == "open"
            else p
            for p in old.proposals
        )
        return replace(old, status=MeetingStatus.RESOLVED, resolution=decided, proposals=proposals)
    if event_type == ev.MEETING_DISSOLVED:
        proposals = tuple(
            replace(p, status="superseded") if p.status == "open" else p for p in old.proposals
        )
        outcome = Dissolved(data.get("reason"))
        return replace(old, status=MeetingStatus.RESOLVED, resolution=outcome, proposals=proposals)
    if event_type == ev.MEETING_ESCALATED:
        return replace(
            old,
            status=MeetingStatus.ESCALATED,
            arbitrators=tuple(str(a) for a in data.get("arbitrators", ())),
            escalation={k: v for k, v in data.items() if k != "meetingId"},
        )
    if event_type == ev.MEETING_HANDOFF_ACCEPTED and isinstance(old.resolution, Decided):
        decided = replace(old.resolution, resolution=old.resolution.resolution.accepted_by_all())
        _index_resolution(book, old.id, decided)
        return replace(old, resolution=decided)
    if event_type == ev.MEETING_LEFT:
        gone = str(data["claimId"])
        rooms = book.rooms_of_claim.get(gone, [])
        if old.id in rooms:
            rooms.remove(old.id)
        kept = tuple(_without(t, gone) for t in old.contested_targets)
        participants = tuple(c for c in old.participants if c != gone)
        targets = tuple(t for t in kept if t.claim_ids)
        return replace(
            old,
            participants=participants,
            contested_targets=targets,
            options=options_for(participants, targets),
        )
    if event_type == ev.MEETING_NOTICE:
        notice = {
            "claimId": data.get("claimId"),
            "reason": data.get("reason"),
            "at": format_time(at),
        }
        return replace(old, notices=(*old.notices, notice))
    return old


def _without(target: ContestedTarget, gone: str) -> ContestedTarget:
    """``target`` once ``gone`` left its room: a reason that named it is restated with
    the claims that still contest the target (no "held by" a departed claim)."""
    left = tuple(c for c in target.claim_ids if c != gone)
    reason = target.reason
    if gone in reason:
        reason = f"contested by {', '.join(left)}" if left else "no longer contested"
    return replace(target, claim_ids=left, reason=reason)


def _index_resolution(book: MeetingBook, meeting_id: str, decided: Decided) -> None:
    settlement = Settlement(meeting_id, decided.resolution)
    for a, b in combinations(sorted(set(decided.affected)), 2):
        book.resolved_pairs[frozenset({a, b})] = settlement
    queue = decided.resolution.queue()
    if queue is not None:
        first, then = queue
        book.serialized.setdefault(first, set()).add(then)
