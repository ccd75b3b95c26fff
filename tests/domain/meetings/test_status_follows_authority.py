"""A claim's status agrees with the authority rule: what reads ``active`` may write what
it holds, and a serialized ``then`` never goes ``active`` while its ``first`` holds."""

from __future__ import annotations

from detente.domain import events as ev_types
from detente.domain.authority import writable
from detente.domain.claims.commands import ChangeScope, SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.domain.events import Event
from detente.domain.invariants import state_violations
from detente.domain.meetings.commands import Resolve
from detente.domain.meetings.resolution_types import Serialize

from decisions import Context, Given, given, open_claim


def _room(g: Given, *claims: str) -> str:
    [room] = [
        m
        for m in sorted(g.state.meetings.open_ids)
        if set(claims) <= set(g.state.meetings[m].participants)
    ]
    return room


def _serialized_a_then_b() -> Given:
    g = given(
        open_claim("clm_a", "f.py", ttl=3600),
        open_claim("clm_b", "f.py", agent="bob", ttl=3600),
    )
    room = _room(g, "clm_a", "clm_b")
    g.when(
        Resolve(room, g.state.meetings[room].revision, Serialize("clm_a", "clm_b"), "h")
    ).and_then()
    assert g.state.claims["clm_b"].status is ClaimStatus.SUSPENDED
    return g


def _released(g: Given, claim_id: str) -> Given:
    claim = g.state.claims[claim_id]
    return g.when(SetStatus(claim_id, claim.revision, ClaimStatus.ABANDONED, "done", {})).and_then()


def test_a_serialized_claim_whose_other_contest_ends_waits_again_behind_its_first() -> None:
    g = _serialized_a_then_b()
    g.and_(open_claim("clm_c", "g.py", agent="carol", ttl=3600))
    b = g.state.claims["clm_b"]
    g.when(ChangeScope("clm_b", b.revision, add_paths=("g.py",), reason="more")).and_then()
    _released(g, "clm_c")
    b = g.state.claims["clm_b"]
    refusing, _ = writable(g.state, b, "f.py")
    assert [c.id for c in refusing] == ["clm_a"]
    assert b.status is ClaimStatus.SUSPENDED, b.status
    assert state_violations(g.state) == []


def test_the_invariants_name_an_active_claim_the_authority_rule_refuses() -> None:
    g = _serialized_a_then_b()
    b = g.state.claims["clm_b"]
    g.fold(
        [
            Event(
                id="evt_forced",
                type=ev_types.CLAIM_ACTIVATED,
                subject="claim/clm_b",
                data={
                    "claimId": "clm_b",
                    "status": "active",
                    "from": b.status.value,
                    "reason": "x",
                },
            )
        ]
    )
    assert any("clm_b" in v and "clm_a" in v for v in state_violations(g.state))


def test_one_completion_resumes_each_serialized_claim_once() -> None:
    g = _serialized_a_then_b()
    a = g.state.claims["clm_a"]
    batch = [
        Event(
            "evt_i",
            ev_types.CLAIM_INTEGRATED,
            "claim/clm_a",
            {
                "claimId": "clm_a",
                "status": "integrated",
                "from": a.status.value,
                "reason": "x",
                "ref": "refs/heads/main",
                "oldOid": "a" * 40,
                "newOid": "b" * 40,
            },
        ),
        Event(
            "evt_c",
            ev_types.CLAIM_COMPLETED,
            "claim/clm_a",
            {"claimId": "clm_a", "status": "completed", "from": "integrated", "reason": "x"},
        ),
    ]
    ctx: Context = g.context
    from detente.domain.meetings.reactions import react

    for e in batch:
        g.state.apply(
            e.type, e.data, at=ctx.now, event_id=e.id, seq=g.state.last_seq + 1, subject=e.subject
        )
    reacted = react(g.state, [(e.type, e.data) for e in batch], ctx.ids, ctx.now, ctx.policy)
    assert [e.type for e in reacted].count(ev_types.CLAIM_RESUMED) == 1
