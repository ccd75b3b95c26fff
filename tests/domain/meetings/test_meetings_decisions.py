"""The meeting decisions, given two claims that contest ``src/a/x.py``."""

from __future__ import annotations

import pytest

from detente.domain import events as ev_types
from detente.domain.claims.model import ClaimStatus
from detente.domain.events import Event
from detente.domain.meetings.commands import Accept, AcceptHandoff, Propose, Resolve
from detente.domain.meetings.decide import decide_deadlines
from detente.domain.meetings.model import MeetingStatus
from detente.domain.meetings.resolution_types import (
    Assignment,
    Handoff,
    HumanArbitration,
    Joint,
    Resolution,
    Serialize,
    SplitOwnership,
)
from detente.domain.state import RepoState

from decisions import Context, Given, ev, given, open_claim

ROOM = "mtg_000006"  # the deterministic id the second opening draws for the meeting

SPLIT = SplitOwnership((Assignment("clm_a", ("src/a/y.py",)), Assignment("clm_b", ("src/a/x.py",))))
SERIALIZE = Serialize(first="clm_a", then="clm_b")
HANDOFF = Handoff(from_claim_id="clm_a", to_claim_id="clm_b")
JOINT = Joint(("clm_a", "clm_b"))


def _contest() -> Given:
    g = given(
        open_claim("clm_a", "src/a/**", ttl=3600),
        open_claim("clm_b", "src/a/x.py", agent="bob", ttl=3600),
    )
    assert g.state.meetings.open_ids == {ROOM}
    return g


def _rev(g: Given) -> int:
    return g.state.meetings[ROOM].revision


def _proposed(g: Given, resolution: Resolution, by: str = "clm_a") -> str:
    step = g.when(Propose(ROOM, _rev(g), by, resolution))
    [added, *_] = step.then(*_types(step.outcome))
    step.and_then()
    return str(added.data["proposalId"])


def _types(outcome: object) -> list[str]:
    assert isinstance(outcome, list), outcome
    return [e.type for e in outcome]


def _deadlines(state: RepoState, ctx: Context) -> list[Event]:
    return decide_deadlines(state, ctx.now, ctx.ids, ctx.owners_of)


# ---------------------------------------------------------------- propose


@pytest.mark.parametrize("resolution", [SPLIT, SERIALIZE, HANDOFF, JOINT], ids=lambda r: r.TYPE)
def test_a_proposal_is_added_accepted_by_its_proposer(resolution: Resolution) -> None:
    g = _contest()
    g.when(Propose(ROOM, _rev(g), "clm_a", resolution)).then(
        ev(
            ev_types.MEETING_PROPOSAL_ADDED,
            claimId="clm_a",
            affected=["clm_a", "clm_b"],
            acceptedBy=["clm_a"],
        )
    )


def test_a_proposal_on_a_stale_meeting_revision_is_a_revision_conflict() -> None:
    g = _contest()
    g.when(Propose(ROOM, _rev(g) + 1, "clm_a", JOINT)).raises("revision_conflict")


def test_a_claim_outside_the_room_may_not_propose() -> None:
    g = _contest().and_(open_claim("clm_c", "docs/**", agent="carol"))
    g.when(Propose(ROOM, _rev(g), "clm_c", JOINT)).raises("forbidden", claimId="clm_c")


def test_a_split_whose_assignments_still_overlap_is_refused() -> None:
    g = _contest()
    clash = SplitOwnership(
        (Assignment("clm_a", ("src/a/x.py",)), Assignment("clm_b", ("src/a/x.py",)))
    )
    g.when(Propose(ROOM, _rev(g), "clm_a", clash)).raises(
        "validation_error", field="resolution.assignments"
    )


def test_asking_for_a_human_escalates_and_blocks_both_claims() -> None:
    g = _contest()
    events = g.when(Propose(ROOM, _rev(g), "clm_b", HumanArbitration())).then(
        ev_types.MEETING_PROPOSAL_ADDED,
        ev(ev_types.MEETING_ESCALATED, reason="asked by clm_b"),
        ev(ev_types.CLAIM_BLOCKED, claimId="clm_a", status="blocked"),
        ev(ev_types.CLAIM_BLOCKED, claimId="clm_b", status="blocked"),
    )
    assert events[1].data["contestedPaths"] == ["src/a/**"]


# ---------------------------------------------------------------- accept


def test_a_proposer_cannot_accept_its_own_proposal_twice() -> None:
    g = _contest()
    pid = _proposed(g, JOINT)
    g.when(Accept(ROOM, _rev(g), "clm_a", pid)).raises("validation_error", field="claimId")


def test_an_accepted_split_gives_each_claim_its_assigned_targets() -> None:
    g = _contest()
    pid = _proposed(g, SPLIT)
    step = g.when(Accept(ROOM, _rev(g), "clm_b", pid))
    step.then(
        ev(ev_types.MEETING_PROPOSAL_ACCEPTED, claimId="clm_b"),
        ev_types.MEETING_RESOLVED,
        ev(ev_types.CLAIM_SCOPE_CHANGED, claimId="clm_a"),
        ev(ev_types.CLAIM_SCOPE_CHANGED, claimId="clm_b", paths=["src/a/x.py"]),
    )
    step.and_then()
    assert g.state.meetings[ROOM].status is MeetingStatus.RESOLVED
    assert g.state.claims["clm_b"].status is ClaimStatus.ACTIVE


def test_an_accepted_serialization_suspends_the_second_claim_behind_the_first() -> None:
    g = _contest()
    pid = _proposed(g, SERIALIZE)
    g.when(Accept(ROOM, _rev(g), "clm_b", pid)).then(
        ev_types.MEETING_PROPOSAL_ACCEPTED,
        ev_types.MEETING_RESOLVED,
        ev(
            ev_types.CLAIM_SUSPENDED,
            claimId="clm_b",
            status="suspended",
            reason=f"serialized behind clm_a (meeting {ROOM})",
        ),
    )


def test_an_accepted_joint_resolution_leaves_both_claims_holding() -> None:
    g = _contest()
    pid = _proposed(g, JOINT)
    step = g.when(Accept(ROOM, _rev(g), "clm_b", pid))
    step.then(ev_types.MEETING_PROPOSAL_ACCEPTED, ev_types.MEETING_RESOLVED)
    step.and_then()
    assert {g.state.claims[c].status for c in ("clm_a", "clm_b")} == {ClaimStatus.ACTIVE}


def test_a_handoff_both_sides_accepted_moves_the_target_at_once() -> None:
    g = _contest()
    pid = _proposed(g, HANDOFF)
    g.when(Accept(ROOM, _rev(g), "clm_b", pid)).then(
        ev_types.MEETING_PROPOSAL_ACCEPTED,
        ev_types.MEETING_RESOLVED,
        ev(ev_types.CLAIM_SCOPE_CHANGED, claimId="clm_a", reason="handed off to clm_b"),
        ev(ev_types.CLAIM_SCOPE_CHANGED, claimId="clm_b", reason="handoff from clm_a"),
    )


# ---------------------------------------------------------------- resolve (a human)


def test_a_human_resolution_takes_effect_and_names_who_resolved() -> None:
    g = _contest()
    [resolved, _suspended] = g.when(Resolve(ROOM, _rev(g), SERIALIZE, "carol")).then(
        ev_types.MEETING_RESOLVED, ev(ev_types.CLAIM_SUSPENDED, claimId="clm_b")
    )
    assert resolved.data["resolution"]["resolvedBy"] == "carol"


def test_a_handoff_a_human_decided_waits_for_the_recipient_to_accept_it() -> None:
    g = _contest()
    step = g.when(Resolve(ROOM, _rev(g), HANDOFF, "carol"))
    step.then(ev(ev_types.MEETING_RESOLVED))
    step.and_then()
    g.when(AcceptHandoff(ROOM, _rev(g), "clm_a")).raises("forbidden")
    accepted = g.when(AcceptHandoff(ROOM, _rev(g), "clm_b"))
    accepted.then(
        ev(ev_types.MEETING_HANDOFF_ACCEPTED, claimId="clm_b"),
        ev(ev_types.CLAIM_SCOPE_CHANGED, claimId="clm_a", carveOuts={"src/a/**": ["src/a/x.py"]}),
        ev(ev_types.CLAIM_SCOPE_CHANGED, claimId="clm_b", paths=["src/a/x.py"]),
    )
    accepted.and_then()
    g.when(AcceptHandoff(ROOM, _rev(g), "clm_b")).raises("invalid_transition")


def test_a_resolved_meeting_takes_no_more_proposals() -> None:
    g = _contest()
    g.when(Resolve(ROOM, _rev(g), JOINT, "carol")).and_then()
    g.when(Propose(ROOM, _rev(g), "clm_a", SERIALIZE)).raises("invalid_transition")


# ---------------------------------------------------------------- deadlines


def test_nothing_escalates_before_the_meeting_deadline() -> None:
    g = _contest()
    g.after(g.context.policy.meeting_deadline_seconds - 1).when(_deadlines).then()


def test_a_meeting_past_its_deadline_escalates_to_human_arbitration() -> None:
    g = _contest()
    g.after(g.context.policy.meeting_deadline_seconds).when(_deadlines).then(
        ev(ev_types.MEETING_ESCALATED, reason="deadline 2026-01-01T00:15:00.000000Z passed"),
        ev(ev_types.CLAIM_BLOCKED, claimId="clm_a", meetingId=ROOM),
        ev(ev_types.CLAIM_BLOCKED, claimId="clm_b", meetingId=ROOM),
    )
