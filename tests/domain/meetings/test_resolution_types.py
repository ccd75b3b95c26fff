"""Typed resolutions: each type reads and writes its wire JSON unchanged, refuses what its
meeting cannot take, and produces its events (given two claims contesting ``src/a/x.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from detente.domain import events as ev_types
from detente.domain.claims.model import ClaimStatus
from detente.domain.meetings.commands import Propose, Resolve
from detente.domain.meetings.model import Decided, decided_from_wire, meeting_to_wire
from detente.domain.meetings.resolution_types import (
    RESOLUTION_TYPES,
    Assignment,
    Handoff,
    HumanArbitration,
    Joint,
    Serialize,
    SplitOwnership,
    resolution_from_wire,
)
from detente.errors import ValidationError

from decisions import Given, ev, given, open_claim

ROOM = "mtg_000006"

#: Each type's wire JSON as a caller submits it (API.md "Meetings").
SUBMITTED: list[dict[str, Any]] = [
    {
        "type": "split_ownership",
        "assignments": [
            {"claimId": "clm_a", "targets": ["src/a/y.py", "AGENTS.md#build"]},
            {"claimId": "clm_b", "targets": []},
        ],
    },
    {"type": "serialize", "first": "clm_a", "then": "clm_b"},
    {"type": "handoff", "fromClaimId": "clm_a", "toClaimId": "clm_b"},
    {"type": "joint", "claimIds": ["clm_a", "clm_b"]},
    {"type": "human_arbitration"},
]

#: As the log stores them: validated (a handoff's moved targets and acceptance derived),
#: with the claims affected and, once applied, who resolved.
STORED: list[dict[str, Any]] = [
    {**SUBMITTED[0], "affected": ["clm_a", "clm_b"], "resolvedBy": "participants"},
    {**SUBMITTED[1], "affected": ["clm_a", "clm_b"]},
    {**SUBMITTED[2], "targets": ["src/a/x.py"], "accepted": False, "affected": ["clm_a", "clm_b"]},
    {**SUBMITTED[2], "targets": [], "accepted": True, "affected": ["clm_a", "clm_b"]},
    {**SUBMITTED[3], "affected": ["clm_a", "clm_b"], "resolvedBy": "carol"},
    {**SUBMITTED[4], "affected": ["clm_a", "clm_b", "clm_c"]},
]


def _contest() -> Given:
    g = given(
        open_claim("clm_a", "src/a/**", ttl=3600),
        open_claim("clm_b", "src/a/x.py", agent="bob", ttl=3600),
    )
    assert g.state.meetings.open_ids == {ROOM}
    return g


def _rev(g: Given) -> int:
    return g.state.meetings[ROOM].revision


# ---------------------------------------------------------------- wire round trip


def test_every_resolution_type_has_a_wire_sample() -> None:
    assert sorted(r["type"] for r in SUBMITTED) == sorted(RESOLUTION_TYPES)


@pytest.mark.parametrize("wire", SUBMITTED, ids=lambda r: r["type"])
def test_a_submitted_resolution_parses_from_its_wire_json_and_writes_the_same_json(
    wire: dict[str, Any],
) -> None:
    assert resolution_from_wire(wire).to_wire() == wire


@pytest.mark.parametrize("wire", STORED, ids=lambda r: r["type"])
def test_a_stored_resolution_parses_from_its_wire_json_and_writes_the_same_json(
    wire: dict[str, Any],
) -> None:
    assert decided_from_wire(wire).to_wire() == wire


def test_a_resolution_of_an_unknown_type_is_refused_naming_the_type() -> None:
    with pytest.raises(ValidationError) as refused:
        resolution_from_wire({"type": "coin_toss"})
    assert refused.value.field == "resolution.type"


def test_a_folded_proposal_and_resolution_read_back_exactly_as_stored() -> None:
    g = _contest()
    [added] = g.when(Propose(ROOM, _rev(g), "clm_a", Joint(("clm_b", "clm_a")))).then(
        ev_types.MEETING_PROPOSAL_ADDED
    )
    g.fold([added])
    [resolved, *_] = g.when(Resolve(ROOM, _rev(g), Serialize("clm_b", "clm_a"), "carol")).then(
        ev_types.MEETING_RESOLVED, ev_types.CLAIM_SUSPENDED
    )
    g.fold([resolved])
    record = meeting_to_wire(g.state.meetings[ROOM])
    assert record["proposals"][0]["resolution"] == added.data["resolution"]
    assert record["resolution"] == resolved.data["resolution"]
    assert resolved.data["resolution"] == {
        "type": "serialize",
        "first": "clm_b",
        "then": "clm_a",
        "affected": ["clm_b", "clm_a"],
        "resolvedBy": "carol",
    }


# ---------------------------------------------------------------- split_ownership


def _split(*pairs: tuple[str, tuple[str, ...]]) -> SplitOwnership:
    return SplitOwnership(tuple(Assignment(c, t) for c, t in pairs))


@pytest.mark.parametrize(
    ("split", "field"),
    [
        (_split(("clm_a", ("src/a/y.py",)), ("clm_z", ())), "resolution.assignments[1].claimId"),
        (
            _split(("clm_a", ("src/a/y.py",)), ("clm_b", ("lib/**",))),
            "resolution.assignments[1].targets[0]",
        ),
        (_split(("clm_a", ()), ("clm_b", ())), "resolution.assignments"),
        (_split(("clm_a", ("src/a/y.py",)), ("clm_a", ())), "resolution.assignments"),
        (_split(("clm_a", ("src/a/y.py",))), "resolution.assignments"),
        (_split(), "resolution.assignments"),
    ],
    ids=["outsider", "territory-not-asked-for", "nothing-assigned", "twice", "one-claim", "empty"],
)
def test_a_split_the_meeting_cannot_take_is_refused(split: SplitOwnership, field: str) -> None:
    g = _contest()
    g.when(Propose(ROOM, _rev(g), "clm_a", split)).raises("validation_error", field=field)


def test_a_split_decided_by_a_human_carves_the_assigned_target_out_of_the_holder() -> None:
    g = _contest()
    split = _split(("clm_a", ()), ("clm_b", ("src/a/x.py",)))
    g.when(Resolve(ROOM, _rev(g), split, "carol")).then(
        ev(ev_types.MEETING_RESOLVED),
        ev(ev_types.CLAIM_SCOPE_CHANGED, claimId="clm_a", carveOuts={"src/a/**": ["src/a/x.py"]}),
        ev(ev_types.CLAIM_SCOPE_CHANGED, claimId="clm_b", paths=["src/a/x.py"]),
    )


# ---------------------------------------------------------------- serialize


@pytest.mark.parametrize(
    ("serialize", "field"),
    [
        (Serialize("clm_a", "clm_a"), "resolution.then"),
        (Serialize("clm_z", "clm_b"), "resolution.first"),
        (Serialize("clm_a", "clm_z"), "resolution.then"),
    ],
    ids=["same-claim", "outsider-first", "outsider-then"],
)
def test_a_serialization_the_meeting_cannot_take_is_refused(
    serialize: Serialize, field: str
) -> None:
    g = _contest()
    g.when(Propose(ROOM, _rev(g), "clm_a", serialize)).raises("validation_error", field=field)


def test_a_serialization_lets_the_first_write_and_queues_the_second() -> None:
    g = _contest()
    step = g.when(Resolve(ROOM, _rev(g), Serialize("clm_b", "clm_a"), "carol"))
    step.then(
        ev(ev_types.MEETING_RESOLVED),
        ev(ev_types.CLAIM_SUSPENDED, claimId="clm_a", status="suspended"),
    )
    step.and_then()
    settled = g.state.meetings.resolved_pairs[frozenset({"clm_a", "clm_b"})]
    assert settled.resolution.lets_write("clm_b") and not settled.resolution.lets_write("clm_a")
    assert g.state.meetings.serialized == {"clm_b": {"clm_a"}}


# ---------------------------------------------------------------- handoff


@pytest.mark.parametrize(
    ("handoff", "field"),
    [
        (Handoff("clm_a", "clm_a"), "resolution.toClaimId"),
        (Handoff("clm_z", "clm_b"), "resolution.fromClaimId"),
        (Handoff("clm_a", "clm_z"), "resolution.toClaimId"),
    ],
    ids=["same-claim", "outsider-sender", "outsider-recipient"],
)
def test_a_handoff_the_meeting_cannot_take_is_refused(handoff: Handoff, field: str) -> None:
    g = _contest()
    g.when(Propose(ROOM, _rev(g), "clm_a", handoff)).raises("validation_error", field=field)


def test_a_proposed_handoff_records_the_recipients_patterns_that_move() -> None:
    g = _contest()
    [added] = g.when(Propose(ROOM, _rev(g), "clm_a", Handoff("clm_a", "clm_b"))).then(
        ev_types.MEETING_PROPOSAL_ADDED
    )
    assert added.data["resolution"] == {
        "type": "handoff",
        "fromClaimId": "clm_a",
        "toClaimId": "clm_b",
        "targets": ["src/a/x.py"],
        "accepted": False,
        "affected": ["clm_a", "clm_b"],
    }


def test_a_human_handoff_waits_for_the_recipient_who_alone_is_not_activated() -> None:
    g = _contest()
    step = g.when(Resolve(ROOM, _rev(g), Handoff("clm_a", "clm_b"), "carol"))
    step.then(ev_types.MEETING_RESOLVED)
    step.and_then()
    assert g.state.claims["clm_b"].status is ClaimStatus.NEGOTIATING
    outcome = g.state.meetings[ROOM].resolution
    assert isinstance(outcome, Decided) and outcome.resolution.awaits() == "clm_b"


# ---------------------------------------------------------------- joint


@pytest.mark.parametrize(
    ("joint", "field"),
    [
        (Joint(("clm_a",)), "resolution.claimIds"),
        (Joint(("clm_a", "clm_a")), "resolution.claimIds"),
        (Joint(("clm_a", "clm_z")), "resolution.claimIds[1]"),
    ],
    ids=["one-claim", "same-claim-twice", "outsider"],
)
def test_a_joint_group_the_meeting_cannot_take_is_refused(joint: Joint, field: str) -> None:
    g = _contest()
    g.when(Propose(ROOM, _rev(g), "clm_a", joint)).raises("validation_error", field=field)


def test_a_joint_group_is_stored_sorted_and_lets_both_claims_write() -> None:
    g = _contest()
    [resolved] = g.when(Resolve(ROOM, _rev(g), Joint(("clm_b", "clm_a")), "carol")).then(
        ev(ev_types.MEETING_RESOLVED)
    )
    assert resolved.data["resolution"]["claimIds"] == ["clm_a", "clm_b"]
    g.fold([resolved])
    settled = g.state.meetings.resolved_pairs[frozenset({"clm_a", "clm_b"})]
    assert settled.resolution.lets_write("clm_a") and settled.resolution.lets_write("clm_b")
    assert {g.state.claims[c].status for c in ("clm_a", "clm_b")} == {ClaimStatus.ACTIVE}


# ---------------------------------------------------------------- human_arbitration


def test_a_human_asking_for_arbitration_escalates_and_blocks_every_participant() -> None:
    g = _contest()
    g.when(Resolve(ROOM, _rev(g), HumanArbitration(), "carol")).then(
        ev(ev_types.MEETING_ESCALATED, reason="asked by carol"),
        ev(ev_types.CLAIM_BLOCKED, claimId="clm_a"),
        ev(ev_types.CLAIM_BLOCKED, claimId="clm_b"),
    )


def test_an_escalated_meeting_cannot_be_escalated_again() -> None:
    g = _contest()
    g.when(Resolve(ROOM, _rev(g), HumanArbitration(), "carol")).and_then()
    g.when(Resolve(ROOM, _rev(g), HumanArbitration(), "carol")).raises("invalid_transition")
