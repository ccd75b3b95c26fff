"""Rooms hold only live parties: a departed holder leaves its rooms by an event, a room
offers only the resolutions that can settle it, and every participant is live."""

from __future__ import annotations

from detente.domain import events as ev_types
from detente.domain.claims.commands import SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.domain.invariants import state_violations
from detente.domain.meetings.model import MeetingStatus, meeting_to_wire
from detente.domain.meetings.reactions import react

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
