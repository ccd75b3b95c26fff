"""A contest ends when its holder lets go of the target, however the holder lets go:
by narrowing its scope as much as by leaving (found by a fresh tester through the CLI)."""

from __future__ import annotations

from detente.domain.authority import writable
from detente.domain.claims.commands import ChangeScope, SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.domain.invariants import state_violations
from detente.domain.meetings.commands import Accept, Propose
from detente.domain.meetings.model import MeetingStatus, meeting_to_wire
from detente.domain.meetings.resolution_types import Serialize

from decisions import Given, given, open_claim


def _serialized_b_behind_a() -> Given:
    g = given(
        open_claim("clm_a", "f.py", "docs/**", ttl=3600),
        open_claim("clm_b", "f.py", agent="bob", ttl=3600),
    )
    [room] = sorted(g.state.meetings.open_ids)
    g.and_(Propose(room, g.state.meetings[room].revision, "clm_b", Serialize("clm_a", "clm_b")))
    [proposal] = g.state.meetings[room].proposals
    g.and_(Accept(room, g.state.meetings[room].revision, "clm_a", proposal.id))
    assert g.state.claims["clm_b"].status is ClaimStatus.SUSPENDED
    return g


def test_a_claim_serialized_behind_a_holder_that_narrows_away_the_target_may_write_it() -> None:
    g = _serialized_b_behind_a()
    a = g.state.claims["clm_a"]
    g.and_(ChangeScope("clm_a", a.revision, remove_paths=("f.py",)))
    assert g.state.claims["clm_a"].paths == ("docs/**",)
    b = g.state.claims["clm_b"]
    refusing, outside = writable(g.state, b, "f.py")
    assert not refusing and not outside, "f.py is writable by nobody"
    assert b.status is ClaimStatus.ACTIVE


def _a_room_whose_holder_leaves() -> tuple[Given, str]:
    """A holds f.py and docs/**; B and C wait for f.py in A's room; D waits for
    docs/x.md and joins the same room (its only holder sits there). Then A abandons."""
    g = given(
        open_claim("clm_a", "f.py", "docs/**", ttl=3600),
        open_claim("clm_b", "f.py", agent="bob", ttl=3600),
        open_claim("clm_c", "f.py", agent="carol", ttl=3600),
        open_claim("clm_d", "docs/x.md", agent="dan", ttl=3600),
    )
    [room] = sorted(g.state.meetings.open_ids)
    assert "clm_d" in g.state.meetings[room].participants
    a = g.state.claims["clm_a"]
    g.and_(SetStatus("clm_a", a.revision, ClaimStatus.ABANDONED, "gone", {}))
    assert g.state.claims["clm_d"].status is ClaimStatus.ACTIVE
    assert g.state.meetings[room].status is not MeetingStatus.RESOLVED  # B, C contest f.py
    return g, room


def test_a_participant_whose_only_holder_left_leaves_the_room_with_it() -> None:
    g, room = _a_room_whose_holder_leaves()
    # D contests nothing any more: a resolution of the room must not have to name it.
    assert "clm_d" not in g.state.meetings[room].participants
    assert state_violations(g.state) == []


def test_no_contested_target_of_a_live_room_reads_held_by_a_departed_claim() -> None:
    g, room = _a_room_whose_holder_leaves()
    record = meeting_to_wire(g.state.meetings[room])
    assert [t for t in record["contestedTargets"] if "clm_a" in t["reason"]] == []


def test_a_holder_that_narrows_away_the_contested_file_leaves_the_room() -> None:
    g = given(
        open_claim("clm_a", "docs/**", ttl=3600),
        open_claim("clm_b", "docs/x.md", agent="bob", ttl=3600),
        open_claim("clm_c", "docs/x.md", agent="carol", ttl=3600),
    )
    [room] = sorted(g.state.meetings.open_ids)
    a = g.state.claims["clm_a"]
    g.and_(ChangeScope("clm_a", a.revision, remove_paths=("docs/x.md",)))
    assert g.state.claims["clm_b"].status is ClaimStatus.ACTIVE  # first to ask
    assert g.state.meetings[room].status is not MeetingStatus.RESOLVED  # C still waits
    # A contests nothing in the room any more: a resolution must not have to name it.
    assert "clm_a" not in g.state.meetings[room].participants
