"""What a resolution does to each kind of target: a path, a glob, a module, a symbol, a
memory section (the rule of :mod:`detente.domain.meetings.target_kinds`), and who is
left unsettled when a resolution does not name every live participant."""

from __future__ import annotations

import pytest

from detente.domain.authority import writable
from detente.domain.claims.commands import SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.domain.invariants import state_violations
from detente.domain.meetings.commands import Accept, AcceptHandoff, Propose, Resolve
from detente.domain.meetings.resolution_types import (
    Assignment,
    Handoff,
    Resolution,
    Serialize,
    SplitOwnership,
)
from detente.domain.write_check import check_targets
from detente.errors import DetenteError

from decisions import T0, Given, given, open_claim


def _room(g: Given, *claims: str) -> str:
    [room] = [
        m
        for m in sorted(g.state.meetings.open_ids)
        if set(claims) <= set(g.state.meetings[m].participants)
    ]
    return room


def _may_write(g: Given, claim_id: str, target: str) -> bool:
    try:
        check_targets(g.state, claim_id, [target], T0)
    except DetenteError:
        return False
    return True


def _handed_off(g: Given, sender: str, recipient: str) -> Given:
    room = _room(g, sender, recipient)
    rev = g.state.meetings[room].revision
    g.when(Propose(room, rev, sender, Handoff(sender, recipient))).and_then()
    [proposal] = g.state.meetings[room].proposals
    rev = g.state.meetings[room].revision
    return g.when(Accept(room, rev, recipient, proposal.id)).and_then()


SENDERS = {
    "module": open_claim("clm_a", modules=("pkg.test",), ttl=3600),
    "glob": open_claim("clm_a", "pkg/test/**", ttl=3600),
    "symbol": open_claim("clm_a", symbols=("pkg/test/test_a.py::T",), ttl=3600),
}


@pytest.mark.parametrize("kind", sorted(SENDERS))
def test_a_handoff_moves_the_file_from_every_kind_of_sender_target(kind: str) -> None:
    g = given(SENDERS[kind], open_claim("clm_b", "pkg/test/test_a.py", agent="bob", ttl=3600))
    _handed_off(g, "clm_a", "clm_b")
    assert g.state.claims["clm_b"].status is ClaimStatus.ACTIVE
    assert _may_write(g, "clm_b", "pkg/test/test_a.py")
    refusing, outside = writable(g.state, g.state.claims["clm_a"], "pkg/test/test_a.py")
    assert [c.id for c in refusing] == ["clm_b"] or outside
    assert state_violations(g.state) == []


def test_a_module_sender_keeps_the_rest_of_its_module_with_the_file_carved_out() -> None:
    g = given(SENDERS["module"], open_claim("clm_b", "pkg/test/test_a.py", agent="bob", ttl=3600))
    _handed_off(g, "clm_a", "clm_b")
    sender = g.state.claims["clm_a"]
    assert sender.status is ClaimStatus.ACTIVE
    assert dict(sender.carve_outs)  # the moved file is carved out of what it keeps
    assert _may_write(g, "clm_a", "pkg/test/test_b.py")
    assert not _may_write(g, "clm_a", "pkg/test/test_a.py")


def test_a_handoff_of_a_symbol_to_its_holder_moves_the_symbol() -> None:
    g = given(
        open_claim("clm_a", "f.py", ttl=3600),
        open_claim("clm_b", symbols=("f.py::K.a",), agent="bob", ttl=3600),
    )
    room = _room(g, "clm_a", "clm_b")
    rev = g.state.meetings[room].revision
    g.when(Resolve(room, rev, Handoff("clm_a", "clm_b"), "carol")).and_then()
    decided = g.state.meetings[room].resolution
    assert decided is not None and decided.to_wire()["targets"] == ["f.py::K.a"]
    g.when(AcceptHandoff(room, g.state.meetings[room].revision, "clm_b")).and_then()
    assert g.state.claims["clm_b"].status is ClaimStatus.ACTIVE
    assert _may_write(g, "clm_b", "f.py::K.a")
    assert not _may_write(g, "clm_a", "f.py::K.a")
    assert state_violations(g.state) == []


def test_a_handoff_that_moves_nothing_is_refused_naming_what_is_left_unsettled() -> None:
    g = given(
        open_claim("clm_a", "a.py", expected_contract_changes=("http:/v1/x",), ttl=3600),
        open_claim("clm_b", expected_contract_changes=("http:/v1/x",), agent="bob", ttl=3600),
    )
    room = _room(g, "clm_a", "clm_b")
    rev = g.state.meetings[room].revision
    refusal = g.when(Resolve(room, rev, Handoff("clm_a", "clm_b"), "carol")).raises(
        "validation_error", field="resolution.toClaimId"
    )
    assert "http:/v1/x" in refusal.detail


# ------------------------------------------------------------ a split names everyone


def _three_over_one_file() -> Given:
    return given(
        open_claim("clm_a", "*.py", ttl=3600),
        open_claim("clm_b", "f.py", agent="bob", ttl=3600),
        open_claim("clm_c", symbols=("f.py::K.a",), agent="carol", ttl=3600),
    )


def test_a_split_that_does_not_name_a_live_participant_is_refused_naming_it() -> None:
    g = _three_over_one_file()
    room = _room(g, "clm_a", "clm_b", "clm_c")
    split = SplitOwnership((Assignment("clm_c", ("f.py::K.a",)), Assignment("clm_a", ())))
    refusal = g.when(Resolve(room, g.state.meetings[room].revision, split, "h")).raises(
        "validation_error", field="resolution"
    )
    assert "clm_b" in refusal.detail
    assert g.state.claims["clm_b"].status is ClaimStatus.NEGOTIATING


def test_a_split_never_makes_an_unnamed_claim_active() -> None:
    g = _three_over_one_file()
    room = _room(g, "clm_a", "clm_b", "clm_c")
    split: Resolution = SplitOwnership(
        (Assignment("clm_c", ("f.py::K.a",)), Assignment("clm_a", ()), Assignment("clm_b", ()))
    )
    outcome = g.when(Resolve(room, g.state.meetings[room].revision, split, "h"))
    if not isinstance(outcome.outcome, DetenteError):
        outcome.and_then()
    assert g.state.claims["clm_b"].status is not ClaimStatus.ACTIVE or not _may_write(
        g, "clm_c", "f.py::K.a"
    )
    assert state_violations(g.state) == []


def test_a_resolution_naming_a_claim_that_left_is_an_invalid_transition() -> None:
    g = _three_over_one_file()
    room = _room(g, "clm_a", "clm_b", "clm_c")
    b = g.state.claims["clm_b"]
    g.and_(SetStatus("clm_b", b.revision, ClaimStatus.ABANDONED, "gone", {}))
    rev = g.state.meetings[room].revision
    g.when(Resolve(room, rev, Serialize("clm_a", "clm_b"), "h")).raises(
        "invalid_transition", claimId="clm_b", field="resolution.then"
    )


def test_a_handoff_from_a_claim_that_was_never_granted_is_refused() -> None:
    g = given(open_claim("clm_a", "src/**", ttl=30), open_claim("clm_b", "src/**", agent="b"))
    room = _room(g, "clm_a", "clm_b")
    rev = g.state.meetings[room].revision
    g.when(Resolve(room, rev, Handoff("clm_b", "clm_a"), "h")).raises(
        "validation_error", field="resolution.fromClaimId"
    )
