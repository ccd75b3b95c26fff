"""A join appends to a room's record: its derived indexes (target positions, wire
entries, the targets naming one claim, the set of parties) and the book's room indexes
are carried from the record before and updated for what the join touched. After any
sequence of openings, joins, departures, notices and closings they equal the same
things computed from scratch, as the fold computed them before (every target of a
room mapped on every event)."""

from __future__ import annotations

import pickle
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from detente.domain import events as ev
from detente.domain.meetings.evolve import MeetingBook
from detente.domain.meetings.model import (
    ContestedTarget,
    Meeting,
    MeetingStatus,
    meeting_to_wire,
)

_AT = datetime(2026, 12, 2, tzinfo=UTC)
_TARGETS = [f"src/{d}/{f}.py" for d in "abc" for f in range(4)] + ["src/**", "src/a/**"]
_CLAIMS = [f"clm_{i}" for i in range(12)]


def _entries(rng: random.Random, claim: str) -> list[dict[str, Any]]:
    out = []
    for target in rng.sample(_TARGETS, rng.randint(1, 3)):
        others = rng.sample(_CLAIMS, rng.randint(0, 2))
        out.append(
            {
                "target": target,
                "claimIds": sorted({claim, *others}),
                "reason": f"path overlap: {target!r} (held by {others[0] if others else claim})",
            }
        )
    return out


def _event(rng: random.Random, book: MeetingBook, n: int) -> tuple[str, dict[str, Any]]:
    """A random meeting event the fold accepts (rooms open more often than they close)."""
    open_rooms = sorted(book.open_ids)
    roll = rng.random()
    if not open_rooms or roll < 0.15:
        parties = rng.sample(_CLAIMS, rng.randint(1, 3))
        return ev.MEETING_OPENED, {
            "meetingId": f"mtg_{n}",
            "participants": parties,
            "contestedTargets": _entries(rng, parties[-1]),
            "deadline": "2026-12-03T00:00:00Z",
        }
    room = rng.choice(open_rooms)
    if roll < 0.65:
        claim = rng.choice(_CLAIMS)
        return ev.MEETING_JOINED, {
            "meetingId": room,
            "claimId": claim,
            "contestedTargets": _entries(rng, claim),
        }
    if roll < 0.8 and book[room].participants:
        return ev.MEETING_LEFT, {"meetingId": room, "claimId": rng.choice(book[room].participants)}
    if roll < 0.9:
        return ev.MEETING_NOTICE, {"meetingId": room, "claimId": _CLAIMS[0], "reason": "note"}
    return ev.MEETING_DISSOLVED, {"meetingId": room, "reason": "no contest left"}


def _scratch_wire(m: Meeting) -> list[dict[str, Any]]:
    return [
        {"target": t.target, "claimIds": list(t.claim_ids), "reason": t.reason}
        for t in m.contested_targets
    ]


def _merged_from_scratch(
    old: tuple[ContestedTarget, ...], data: dict[str, Any]
) -> tuple[ContestedTarget, ...]:
    """The contested targets after a join, merged by target as the fold always did."""
    merged = {t.target: t for t in old}
    for raw in data["contestedTargets"]:
        have = merged.get(raw["target"])
        ids = tuple(sorted({*(have.claim_ids if have else ()), *raw["claimIds"]}))
        merged[raw["target"]] = (
            have.__class__(have.target, ids, have.reason, have.kind)
            if have is not None
            else ContestedTarget(raw["target"], ids, raw["reason"])
        )
    return tuple(merged.values())


class _Reference:
    """The room indexes as the fold kept them before joins appended: every party and
    every target of a room visited on every event."""

    def __init__(self) -> None:
        self.room_of_target: dict[str, str] = {}
        self.rooms_of_claim: dict[str, list[str]] = {}

    def index(self, meeting: Meeting, old: Meeting | None) -> None:
        same = old is not None and old.status is meeting.status
        had = frozenset(old.participants) if same and old is not None else frozenset()
        for claim_id in meeting.participants:
            if claim_id in had:
                continue
            rooms = self.rooms_of_claim.setdefault(claim_id, [])
            if meeting.id not in rooms:
                rooms.append(meeting.id)
        if meeting.status is MeetingStatus.OPEN:
            for target in meeting.contested_targets:
                self.room_of_target.setdefault(target.target, meeting.id)
        else:
            for target in meeting.contested_targets:
                if self.room_of_target.get(target.target) == meeting.id:
                    del self.room_of_target[target.target]


def _assert_derived_from_scratch(m: Meeting) -> None:
    assert m.target_positions == {t.target: i for i, t in enumerate(m.contested_targets)}
    assert m.targets_wire == _scratch_wire(m)
    assert meeting_to_wire(m)["contestedTargets"] == _scratch_wire(m)
    assert m.solo_targets == {
        t.target: t.claim_ids[0] for t in m.contested_targets if len(t.claim_ids) == 1
    }
    assert m.solo_claims == frozenset(
        t.claim_ids[0] for t in m.contested_targets if len(t.claim_ids) == 1
    )
    assert m.party_set == frozenset(m.participants)


@pytest.mark.parametrize("seed", range(12))
def test_room_records_after_random_events_equal_records_built_from_scratch(seed: int) -> None:
    rng = random.Random(seed)
    book = MeetingBook("repo")
    ref = _Reference()
    for n in range(160):
        event_type, data = _event(rng, book, n)
        old = book.get(data["meetingId"])
        if old is not None and rng.random() < 0.5:
            _assert_derived_from_scratch(old)  # some records have their caches built
        book.apply(event_type, data, _AT + timedelta(seconds=n), f"evt_{n}")
        new = book[data["meetingId"]]
        if event_type == ev.MEETING_JOINED and old is not None:
            assert new.contested_targets == _merged_from_scratch(old.contested_targets, data)
        if event_type == ev.MEETING_LEFT:  # the departure leaves the room's index
            rooms = ref.rooms_of_claim.get(data["claimId"], [])
            if new.id in rooms:
                rooms.remove(new.id)
        ref.index(new, old)
        _assert_derived_from_scratch(new)
        assert book.room_of_target == ref.room_of_target
        assert book.rooms_of_claim == ref.rooms_of_claim


def test_a_record_pickles_without_its_derived_indexes() -> None:
    book = MeetingBook("repo")
    book.apply(
        ev.MEETING_OPENED,
        {
            "meetingId": "mtg_1",
            "participants": ["clm_a", "clm_b"],
            "contestedTargets": [{"target": "a.py", "claimIds": ["clm_a", "clm_b"], "reason": "r"}],
            "deadline": "2026-12-03T00:00:00Z",
        },
        _AT,
        "evt_1",
    )
    m = book["mtg_1"]
    _assert_derived_from_scratch(m)  # every cache built
    copy = pickle.loads(pickle.dumps(m))
    assert copy == m
    assert not {"wire", "party_set", "targets_wire", "solo_targets"} & set(copy.__dict__)
    assert "wire" not in pickle.loads(pickle.dumps(m.contested_targets[0])).__dict__
    _assert_derived_from_scratch(copy)


@pytest.mark.parametrize("seed", range(20))
def test_a_join_unites_a_targets_claims_as_a_sorted_set_would(seed: int) -> None:
    rng = random.Random(seed)
    have = tuple(sorted(rng.sample(_CLAIMS, rng.randint(1, 8))))
    if rng.random() < 0.3:  # a stored list in another order, or with a repeat
        have = (*rng.sample(have, len(have)), have[0])
    more = tuple(rng.sample(_CLAIMS, rng.randint(1, 4)))
    book = MeetingBook("repo")
    opened = {"target": "a.py", "claimIds": list(have), "reason": "r"}
    book.apply(
        ev.MEETING_OPENED,
        {
            "meetingId": "mtg_1",
            "participants": list(dict.fromkeys(have)),
            "contestedTargets": [opened],
            "deadline": "2026-12-03T00:00:00Z",
        },
        _AT,
        "evt_1",
    )
    joined = {"target": "a.py", "claimIds": list(more), "reason": "r"}
    data = {"meetingId": "mtg_1", "claimId": more[0], "contestedTargets": [joined]}
    book.apply(ev.MEETING_JOINED, data, _AT, "evt_2")
    assert book["mtg_1"].contested_targets[0].claim_ids == tuple(sorted({*have, *more}))
