"""The due check reads the earliest deadline of the open rooms from a heap kept by the
fold: it moves with rooms opening, escalating and dissolving, never names a closed room."""

from __future__ import annotations

from datetime import timedelta

from detente.domain.claims.commands import SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.domain.meetings.decide import decide_deadlines, due_meetings

from decisions import given, open_claim


def test_no_open_room_has_no_deadline() -> None:
    g = given(open_claim("clm_a", "a.py", ttl=3600))
    assert g.state.meetings.first_deadline() is None
    assert not due_meetings(g.state, g.context.now + timedelta(days=365))


def test_the_earliest_open_room_sets_the_deadline() -> None:
    g = given(open_claim("clm_a", "a.py", ttl=3600), open_claim("clm_b", "a.py", agent="b"))
    first = g.state.meetings.first_deadline()
    g.after(60).and_(
        open_claim("clm_c", "c.py", agent="c", ttl=3600),
        open_claim("clm_d", "c.py", agent="d", ttl=3600),
    )
    deadlines = sorted(g.state.meetings[m].deadline for m in g.state.meetings.open_ids)
    assert len(deadlines) == 2
    assert first == deadlines[0] == g.state.meetings.first_deadline()
    assert not due_meetings(g.state, deadlines[0] - timedelta(microseconds=1))
    assert due_meetings(g.state, deadlines[0])


def test_a_room_that_closed_no_longer_counts() -> None:
    g = given(open_claim("clm_a", "a.py", ttl=3600), open_claim("clm_b", "a.py", agent="b"))
    g.after(60).and_(
        open_claim("clm_c", "c.py", agent="c", ttl=3600),
        open_claim("clm_d", "c.py", agent="d", ttl=3600),
    )
    later = max(g.state.meetings[m].deadline for m in g.state.meetings.open_ids)
    b = g.state.claims["clm_b"]
    g.and_(SetStatus("clm_b", b.revision, ClaimStatus.ABANDONED, "gone", {}))
    assert len(g.state.meetings.open_ids) == 1
    assert g.state.meetings.first_deadline() == later


def test_an_escalated_room_leaves_the_heap() -> None:
    g = given(open_claim("clm_a", "a.py", ttl=3600), open_claim("clm_b", "a.py", agent="b"))
    deadline = g.state.meetings.first_deadline()
    assert deadline is not None
    g.after((deadline - g.context.now).total_seconds()).and_(
        lambda state, ctx: decide_deadlines(state, ctx.now, ctx.ids, ctx.owners_of)
    )
    assert g.state.meetings.open_ids == set()
    assert g.state.meetings.first_deadline() is None
