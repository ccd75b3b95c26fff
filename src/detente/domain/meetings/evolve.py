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


def _merge(
    old: tuple[ContestedTarget, ...], new: tuple[ContestedTarget, ...]
) -> tuple[ContestedTarget, ...]:
    """Contested targets keyed by target: a joining claim adds its id to an existing one."""
    merged = {t.target: t for t in old}
    for t in new:
        have = merged.get(t.target)
        merged[t.target] = (
            t
            if have is None
            else replace(have, claim_ids=tuple(sorted({*have.claim_ids, *t.claim_ids})))
        )
    return tuple(merged.values())


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
        self[meeting_id] = replace(
            new, revision=old.revision + 1, updated_at=at, last_event_id=event_id
        )
        _index_rooms(self, self[meeting_id], old)


def _index_rooms(book: MeetingBook, meeting: Meeting, old: Meeting | None = None) -> None:
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
    had = frozenset(old.participants) if same and old is not None else frozenset()
    for claim_id in meeting.participants:
        if claim_id in had:  # indexed with the record before
            continue
        rooms = book.rooms_of_claim.setdefault(claim_id, [])
        if meeting.id not in rooms:
            rooms.append(meeting.id)
    if meeting.status is MeetingStatus.OPEN:
        for target in meeting.contested_targets:
            book.room_of_target.setdefault(target.target, meeting.id)
    else:
        for target in meeting.contested_targets:
            if book.room_of_target.get(target.target) == meeting.id:
                del book.room_of_target[target.target]


def _evolve(
    book: MeetingBook, old: Meeting, event_type: str, data: dict[str, Any], at: datetime
) -> Meeting:
    if event_type == ev.MEETING_JOINED:
        claim_id = str(data["claimId"])
        joined = (claim_id,) if claim_id not in old.participants else ()
        targets = _merge(old.contested_targets, _targets(data))
        return replace(
            old,
            participants=old.participants + joined,
            options=options_for(old.participants + joined, targets),
            contested_targets=targets,
            merge_conflicts=old.merge_conflicts
            + tuple(dict(c) for c in data.get("mergeConflicts", ())),
        )
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
