"""The claim decisions, given a history, when a command, then events or a refusal."""

from __future__ import annotations

from detente.domain import events as ev_types
from detente.domain.claims.commands import (
    ChangeObjective,
    ChangeScope,
    RenewLease,
    SetStatus,
    TakeoverRequest,
)
from detente.domain.claims.decide import decide_expiry
from detente.domain.claims.model import ClaimStatus
from detente.domain.claims.opening import decide_announce_draft
from detente.domain.claims.takeover import PredecessorFacts, decide_approve, decide_takeover
from detente.domain.events import Event
from detente.domain.state import RepoState

from decisions import Context, Decision, Given, ev, given, open_claim

ALICE = open_claim("clm_a", "src/a/**", ttl=60)


def _renew(g: Given, claim_id: str = "clm_a", ttl: int = 120) -> RenewLease:
    c = g.state.claims[claim_id]
    return RenewLease(claim_id, c.lease.revision, c.revision, ttl)


def _revision(g: Given, claim_id: str = "clm_a") -> int:
    return g.state.claims[claim_id].revision


def _expire(state: RepoState, ctx: Context) -> list[Event]:
    return decide_expiry(state, ctx.now, ctx.ids)


# ---------------------------------------------------------------- open, announce, activate


def test_a_claim_on_free_targets_is_announced_then_activated() -> None:
    given().when(ALICE).then(
        ev(ev_types.CLAIM_ANNOUNCED, claimId="clm_a", paths=["src/a/**"], fencingToken=1),
        ev(ev_types.CLAIM_ACTIVATED, status="active", reason="no overlap"),
    )


def test_a_claim_on_held_targets_negotiates_in_a_new_meeting() -> None:
    announced, opened, negotiating = (
        given(ALICE)
        .when(open_claim("clm_b", "src/a/x.py", agent="bob"))
        .then(ev_types.CLAIM_ANNOUNCED, ev_types.MEETING_OPENED, ev_types.CLAIM_NEGOTIATING)
    )
    assert opened.data["participants"] == ["clm_a", "clm_b"]
    assert negotiating.data["meetingId"] == opened.data["meetingId"]
    assert announced.data["fencingToken"] == 2


def test_a_claim_id_already_used_is_refused() -> None:
    given(ALICE).when(open_claim("clm_a", "x/**")).raises("validation_error", field="id")


def test_a_claim_without_targets_is_refused() -> None:
    given().when(open_claim("clm_a")).raises("validation_error", field="paths")


def test_a_draft_holds_nothing_until_announced_and_its_lease_starts_then() -> None:
    g = given(open_claim("clm_d", "src/a/**", draft=True))
    assert g.state.claims["clm_d"].status is ClaimStatus.DRAFT
    g.when(_renew(g, "clm_d")).raises("invalid_transition", **{"from": "draft"})

    def announce(state: RepoState, ctx: Context) -> list[Event]:
        rev = state.claims["clm_d"].revision
        return decide_announce_draft(state, "clm_d", rev, 120, ctx.now, ctx.ids, ctx.policy)

    g.after(600).when(announce).then(
        ev(
            ev_types.CLAIM_DRAFT_ANNOUNCED,
            status="announced",
            expiresAt="2026-01-01T00:12:00.000000Z",
        ),
        ev(ev_types.CLAIM_ACTIVATED, status="active"),
    )


# ---------------------------------------------------------------- renew


def test_a_renewal_moves_the_lease_revision_and_its_absolute_deadline() -> None:
    g = given(ALICE).after(30)
    g.when(_renew(g)).then(
        ev(
            ev_types.LEASE_RENEWED,
            leaseRevision=2,
            ttlSeconds=120,
            expiresAt="2026-01-01T00:02:30.000000Z",
        )
    )


def test_a_renewal_a_second_before_the_deadline_is_in_time() -> None:
    g = given(ALICE).after(59)
    g.when(_renew(g)).then(ev_types.LEASE_RENEWED)


def test_a_renewal_at_the_deadline_is_lease_expired() -> None:
    g = given(ALICE).after(60)
    g.when(_renew(g)).raises("lease_expired")


def test_a_renewal_naming_an_old_lease_revision_is_a_revision_conflict() -> None:
    g = given(ALICE)
    g.when(_renew(g)).and_then()
    g.when(RenewLease("clm_a", 1, _revision(g), 60)).raises("revision_conflict")


def test_a_renewal_beyond_the_policys_longest_lease_is_refused() -> None:
    g = given(ALICE)
    g.when(_renew(g, ttl=g.context.policy.max_ttl_seconds + 1)).raises("validation_error")


# ---------------------------------------------------------------- scope and objective


def test_a_scope_change_onto_free_targets_widens_the_claim() -> None:
    g = given(ALICE)
    g.when(ChangeScope("clm_a", _revision(g), add_paths=("src/b/**",))).then(
        ev(ev_types.CLAIM_SCOPE_CHANGED, paths=["src/a/**", "src/b/**"], pendingPaths=[])
    )


def test_a_scope_change_onto_held_targets_opens_a_meeting() -> None:
    g = given(ALICE, open_claim("clm_b", "src/b/**", agent="bob"))
    events = g.when(ChangeScope("clm_b", _revision(g, "clm_b"), add_paths=("src/a/x.py",))).then(
        ev_types.CLAIM_SCOPE_CHANGED, ev_types.MEETING_OPENED, ev_types.CLAIM_NEGOTIATING
    )
    assert events[1].data["participants"] == ["clm_a", "clm_b"]


def test_a_scope_change_on_a_stale_revision_is_a_revision_conflict() -> None:
    g = given(ALICE)
    cmd = ChangeScope("clm_a", _revision(g) + 1, add_paths=("src/b/**",))
    g.when(cmd).raises("revision_conflict", expected=3, actual=2)


def test_a_scope_change_may_not_drop_the_last_target() -> None:
    g = given(ALICE)
    cmd = ChangeScope("clm_a", _revision(g), remove_paths=("src/a/**",))
    g.when(cmd).raises("validation_error", field="removePaths")


def test_a_changed_objective_records_the_previous_one() -> None:
    g = given(ALICE)
    g.when(ChangeObjective("clm_a", _revision(g), "rewrite the parser")).then(
        ev(
            ev_types.CLAIM_OBJECTIVE_CHANGED,
            objective="rewrite the parser",
            previousObjective="alice works on src/a/**",
        )
    )


def test_an_unchanged_objective_is_refused() -> None:
    g = given(ALICE)
    cmd = ChangeObjective("clm_a", _revision(g), ALICE.objective)
    g.when(cmd).raises("validation_error", field="objective")


# ---------------------------------------------------------------- suspend, resume, abandon


def test_a_live_claim_is_suspended_and_resumed_to_active() -> None:
    g = given(ALICE)
    suspend = g.when(SetStatus("clm_a", _revision(g), ClaimStatus.SUSPENDED))
    suspend.then(ev(ev_types.CLAIM_SUSPENDED, status="suspended", **{"from": "active"}))
    suspend.and_then()
    g.when(SetStatus("clm_a", _revision(g), ClaimStatus.ACTIVE)).then(
        ev(ev_types.CLAIM_RESUMED, status="active", **{"from": "suspended"})
    )


def test_only_a_suspended_claim_can_resume() -> None:
    g = given(ALICE)
    g.when(SetStatus("clm_a", _revision(g), ClaimStatus.ACTIVE)).raises(
        "invalid_transition", **{"from": "active", "to": "active"}
    )


def test_completion_cannot_be_set_as_a_status() -> None:
    g = given(ALICE)
    cmd = SetStatus("clm_a", _revision(g), ClaimStatus.COMPLETED)
    g.when(cmd).raises("validation_error", field="status")


def test_an_abandoned_claim_stays_abandoned() -> None:
    g = given(ALICE)
    abandon = g.when(SetStatus("clm_a", _revision(g), ClaimStatus.ABANDONED))
    abandon.then(ev(ev_types.CLAIM_ABANDONED, status="abandoned"))
    abandon.and_then()
    g.when(SetStatus("clm_a", _revision(g), ClaimStatus.SUSPENDED)).raises("invalid_transition")


# ---------------------------------------------------------------- expiry


def test_nothing_expires_before_the_deadline() -> None:
    given(ALICE).after(59).when(_expire).then()


def test_a_lease_expires_at_its_deadline() -> None:
    given(ALICE).after(60).when(_expire).then(
        ev(
            ev_types.CLAIM_EXPIRED,
            claimId="clm_a",
            status="expired",
            reason="lease deadline 2026-01-01T00:01:00.000000Z passed",
        )
    )


# ---------------------------------------------------------------- takeover


NO_FACTS = PredecessorFacts()


def _takeover(facts: PredecessorFacts = NO_FACTS) -> Decision:
    def decide(state: RepoState, ctx: Context) -> list[Event]:
        request = TakeoverRequest("clm_a", state.claims["clm_a"].revision)
        successor = open_claim("clm_s", agent="bob")
        return decide_takeover(state, successor, request, facts, ctx.now, ctx.ids, ctx.policy)

    return decide


def test_a_live_claim_cannot_be_taken_over() -> None:
    given(ALICE).when(_takeover()).raises(
        "invalid_transition", **{"from": "active", "to": "taken_over"}
    )


def test_an_expired_claim_is_taken_over_only_after_its_grace_period() -> None:
    g = given(ALICE).after(60).and_(_expire)
    g.when(_takeover()).raises("invalid_transition", readyAt="2026-01-01T00:01:30.000000Z")
    successor, taken, _ = (
        g.after(g.context.policy.takeover_grace_seconds)
        .when(_takeover())
        .then(
            ev(ev_types.CLAIM_ANNOUNCED, claimId="clm_s", paths=["src/a/**"]),
            ev(ev_types.CLAIM_TAKEN_OVER, claimId="clm_a", successorId="clm_s"),
            ev(ev_types.CLAIM_ACTIVATED, claimId="clm_s"),
        )
    )
    assert successor.data["takeoverOf"]["claimId"] == "clm_a"
    assert taken.data["status"] == "taken_over"


def test_an_abandoned_claim_is_taken_over_at_once() -> None:
    g = given(ALICE, SetStatus("clm_a", 2, ClaimStatus.ABANDONED))
    g.when(_takeover()).then(
        ev_types.CLAIM_ANNOUNCED, ev_types.CLAIM_TAKEN_OVER, ev_types.CLAIM_ACTIVATED
    )


def test_a_takeover_over_gated_work_waits_blocked_for_an_approval() -> None:
    g = given(
        open_claim("clm_a", "db/migrations/001.sql", ttl=60),
        SetStatus("clm_a", 2, ClaimStatus.ABANDONED),
    )
    facts = PredecessorFacts(changed_files=("db/migrations/001.sql",))
    _, blocked = g.when(_takeover(facts)).then(
        ev_types.CLAIM_ANNOUNCED, ev(ev_types.CLAIM_BLOCKED, status="blocked")
    )
    assert "approval" in blocked.data["reason"]
    g.when(_takeover(facts)).and_then()

    def approve(state: RepoState, ctx: Context) -> list[Event]:
        rev = state.claims["clm_s"].revision
        return decide_approve(state, "clm_s", rev, "carol", "human", ctx.now, ctx.ids, ctx.policy)

    approved = g.when(approve).outcome
    assert isinstance(approved, list), approved
    types = [e.type for e in approved]
    assert types[0] == ev_types.CLAIM_TAKEOVER_APPROVED
    assert ev_types.CLAIM_TAKEN_OVER in types
