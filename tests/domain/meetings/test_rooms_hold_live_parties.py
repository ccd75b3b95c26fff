"""Rooms hold only live parties: a departed holder leaves its rooms by an event, a room
offers only the resolutions that can settle it, and every participant is live."""

from __future__ import annotations

from detente.domain import events as ev_types
from detente.domain.authority import writable
from detente.domain.claims.commands import SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.domain.events import Event
from detente.domain.invariants import state_violations
from detente.domain.meetings.commands import Resolve
from detente.domain.meetings.model import MeetingStatus, meeting_to_wire
from detente.domain.meetings.reactions import react
from detente.domain.meetings.resolution_types import Assignment, SplitOwnership

from decisions import Given, ev, given, open_claim


def _rooms_of(g: Given, claim_id: str) -> list[str]:
    return [
        m
        for m in sorted(g.state.meetings)
        if claim_id in g.state.meetings[m].participants
        and g.state.meetings[m].status is not MeetingStatus.RESOLVED
    ]


def _four_over_one_file() -> Given:
    return given(
        open_claim("clm_a", "f.py", ttl=3600),
        open_claim("clm_b", "f.py", agent="bob", ttl=3600),
        open_claim("clm_c", "f.py", agent="carol", ttl=3600),
        open_claim("clm_d", "*.py", agent="dan", ttl=3600),
    )


def test_four_parties_over_one_file_negotiate_in_one_room() -> None:
    g = _four_over_one_file()
    [room] = sorted(g.state.meetings.open_ids)
    assert set(g.state.meetings[room].participants) == {"clm_a", "clm_b", "clm_c", "clm_d"}
    assert state_violations(g.state) == []


def test_a_departed_holder_leaves_its_rooms_by_an_event() -> None:
    g = _four_over_one_file()
    [room] = _rooms_of(g, "clm_a")
    a = g.state.claims["clm_a"]
    step = g.when(SetStatus("clm_a", a.revision, ClaimStatus.ABANDONED, "gone", {}))
    step.then(ev_types.CLAIM_ABANDONED)
    step.and_then()
    left = [e for e in g.state.meetings[room].participants if e == "clm_a"]
    assert left == []
    assert _rooms_of(g, "clm_a") == []
    record = meeting_to_wire(g.state.meetings[room])
    assert all("clm_a" not in t["claimIds"] for t in record["contestedTargets"])
    assert state_violations(g.state) == []


def test_a_room_of_three_offers_only_the_resolutions_that_name_everyone() -> None:
    g = _four_over_one_file()
    [room] = sorted(g.state.meetings.open_ids)
    assert g.state.meetings[room].options == ("split_ownership", "joint", "human_arbitration")


def test_a_room_of_two_offers_every_resolution() -> None:
    g = given(open_claim("clm_a", "f.py", ttl=3600), open_claim("clm_b", "f.py", agent="b"))
    [room] = sorted(g.state.meetings.open_ids)
    assert "serialize" in g.state.meetings[room].options
    assert "handoff" in g.state.meetings[room].options


def test_the_leave_event_names_the_room_and_the_claim() -> None:
    g = _four_over_one_file()
    [room] = _rooms_of(g, "clm_b")
    b = g.state.claims["clm_b"]
    [abandoned] = g.when(SetStatus("clm_b", b.revision, ClaimStatus.ABANDONED, "gone", {})).then(
        ev_types.CLAIM_ABANDONED
    )
    ctx = g.context
    g.state.apply(
        abandoned.type,
        abandoned.data,
        at=ctx.now,
        event_id=abandoned.id,
        seq=g.state.last_seq + 1,
        subject=abandoned.subject,
    )
    reacted = react(g.state, [(abandoned.type, abandoned.data)], ctx.ids, ctx.now, ctx.policy)
    [left] = [e for e in reacted if e.type == ev_types.MEETING_LEFT]
    ev(ev_types.MEETING_LEFT, meetingId=room, claimId="clm_b", status="abandoned").check(left)


def test_four_parties_of_every_kind_over_one_file_negotiate_in_one_room() -> None:
    g = given(
        open_claim("clm_a", "src/**", ttl=3600),
        open_claim("clm_b", "src/app.py", agent="bob", ttl=3600),
        open_claim("clm_c", modules=("src",), agent="carol", ttl=3600),
        open_claim("clm_d", symbols=("src/app.py::f",), agent="dan", ttl=3600),
    )
    [room] = sorted(g.state.meetings.open_ids)
    assert set(g.state.meetings[room].participants) == {"clm_a", "clm_b", "clm_c", "clm_d"}
    assert state_violations(g.state) == []


def test_a_dissolved_room_reads_outcome_dissolved_and_no_resolution() -> None:
    g = given(open_claim("clm_a", "f.py", ttl=3600), open_claim("clm_b", "f.py", agent="b"))
    [room] = sorted(g.state.meetings.open_ids)
    a = g.state.claims["clm_a"]
    g.and_(SetStatus("clm_a", a.revision, ClaimStatus.ABANDONED, "gone", {}))
    record = meeting_to_wire(g.state.meetings[room])
    assert record["status"] == "resolved"
    assert record["outcome"] == "dissolved"
    assert record["resolution"] is None  # "dissolved" is no resolution type
    assert record["dissolution"]["reason"]


def test_a_target_a_split_settles_is_granted_at_once_and_the_rest_stays_pending() -> None:
    g = given(
        open_claim("clm_a", "f.py", ttl=3600),
        open_claim("clm_b", "f.py", agent="bob", ttl=3600),
        open_claim("clm_d", "g.py", agent="dan", ttl=3600),
        open_claim("clm_c", "f.py", "g.py", agent="carol", ttl=3600),
    )
    [room] = [
        m for m in sorted(g.state.meetings.open_ids) if "clm_b" in g.state.meetings[m].participants
    ]
    assert "clm_d" not in g.state.meetings[room].participants
    split = SplitOwnership(
        (Assignment("clm_c", ("f.py",)), Assignment("clm_a", ()), Assignment("clm_b", ()))
    )
    g.when(Resolve(room, g.state.meetings[room].revision, split, "h")).and_then()
    c = g.state.claims["clm_c"]
    assert c.granted and c.pending_paths == ("g.py",), (c.status, c.paths, c.pending_paths)
    assert c.status is ClaimStatus.NEGOTIATING
    refusing, outside = writable(g.state, c, "f.py")
    assert not refusing and not outside
    assert state_violations(g.state) == []


def test_the_invariants_name_a_target_a_split_assigned_that_nobody_may_write() -> None:
    g = given(
        open_claim("clm_a", "f.py", ttl=3600),
        open_claim("clm_b", "f.py", agent="bob", ttl=3600),
    )
    [room] = sorted(g.state.meetings.open_ids)
    split = SplitOwnership((Assignment("clm_b", ("f.py",)), Assignment("clm_a", ())))
    outcome = g.when(Resolve(room, g.state.meetings[room].revision, split, "h")).outcome
    assert isinstance(outcome, list)
    for e in outcome:  # folded without the reactions: clm_b is never granted f.py
        _apply(g, e)
    assert g.state.claims["clm_b"].status is ClaimStatus.NEGOTIATING
    assert any("f.py" in v and "clm_b" in v for v in state_violations(g.state))


def _apply(g: Given, e: Event) -> None:
    at, seq = g.context.now, g.state.last_seq + 1
    g.state.apply(e.type, e.data, at=at, event_id=e.id, seq=seq, subject=e.subject)


def test_a_waiters_status_reason_names_no_holder_that_has_left() -> None:
    g = _four_over_one_file()
    assert "clm_a" in (g.state.claims["clm_c"].status_reason or "")
    a = g.state.claims["clm_a"]
    g.when(SetStatus("clm_a", a.revision, ClaimStatus.ABANDONED, "gone", {})).and_then()
    departed = {c.id for c in g.state.claims.values() if not c.holding}
    waiting = [c for c in g.state.claims.values() if c.status is ClaimStatus.NEGOTIATING]
    assert departed == {"clm_a"} and waiting
    for claim in waiting:
        reason = claim.status_reason or ""
        assert not any(gone in reason for gone in departed), (claim.id, reason)
        assert "clm_b" in reason  # it names who holds it off now
    assert state_violations(g.state) == []
