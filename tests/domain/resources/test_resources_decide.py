"""Shared resource decisions: capacity, the line of waiters, fencing, CAS, expiry, the
counter (given/when/then, no store)."""

from __future__ import annotations

from typing import Any

import pytest

from detente.domain import events as e
from detente.domain.resources.commands import Acquire, Declare, NextNumber, Release, Renew
from detente.domain.resources.expiry import decide_resource_expiry
from detente.domain.resources.model import resource_id
from detente.domain.state import RepoState

from decisions import Context, ev, given, open_claim


def acquire(who: str = "alice", *, name: str = "build", ttl: int = 60, **kw: Any) -> Acquire:
    return Acquire(repo="demo", name=name, principal=who, ttl_seconds=ttl, **kw)


def expire(state: RepoState, context: Context) -> list[e.Event]:
    return decide_resource_expiry(state, context.now, context.ids)


def holders(state: RepoState, name: str = "build") -> list[tuple[str, int]]:
    resource = state.resources[resource_id("demo", name)]
    return [(g.principal, g.fencing_token) for g in resource.holders]


def waiters(state: RepoState, name: str = "build") -> list[str]:
    return [w.principal for w in state.resources[resource_id("demo", name)].waiters]


def test_the_first_acquire_declares_the_resource_with_its_capacity_and_grants_a_slot() -> None:
    given().when(acquire(capacity=2)).then(
        ev(e.RESOURCE_DECLARED, resource="build", capacity=2),
        ev(e.RESOURCE_GRANTED, resource="build", principal="alice", fencingToken=1, ttlSeconds=60),
    )


def test_a_grant_takes_the_repositorys_next_fencing_token_after_the_claims() -> None:
    start = given(open_claim("clm_a", "src/**"))
    assert start.state.claims.last_fencing_token == 1
    start.when(acquire()).then(e.RESOURCE_DECLARED, ev(e.RESOURCE_GRANTED, fencingToken=2))


def test_a_full_resource_refuses_at_once_with_resource_busy_and_its_record() -> None:
    refusal = given(acquire(capacity=1)).when(acquire("bob")).raises("resource_busy")
    assert refusal.extra["current"]["holders"][0]["principal"] == "alice"


def test_a_full_resource_queues_a_waiter_that_asked_to_wait() -> None:
    given(acquire(capacity=1)).when(acquire("bob", wait=True)).then(
        ev(e.RESOURCE_QUEUED, principal="bob", position=1)
    )


def test_a_release_grants_the_freed_slot_to_the_first_waiter_with_a_newer_token() -> None:
    scenario = given(acquire(capacity=1), acquire("bob", wait=True), acquire("carol", wait=True))
    scenario.when(Release(repo="demo", name="build", by="alice", fencing_token=1)).then(
        ev(e.RESOURCE_RELEASED, fencingToken=1, holder="alice", forced=False),
        ev(e.RESOURCE_GRANTED, principal="bob", fencingToken=2),
    )


def test_waiters_are_served_in_arrival_order_as_slots_free() -> None:
    scenario = given(
        acquire(capacity=2),
        acquire("bob"),
        acquire("carol", wait=True),
        acquire("dave", wait=True),
        acquire("erin", wait=True),
    )
    assert holders(scenario.state) == [("alice", 1), ("bob", 2)]
    assert waiters(scenario.state) == ["carol", "dave", "erin"]
    scenario.and_(Release(repo="demo", name="build", by="bob", fencing_token=2))
    assert holders(scenario.state) == [("alice", 1), ("carol", 3)]
    scenario.and_(Release(repo="demo", name="build", by="alice", fencing_token=1))
    assert holders(scenario.state) == [("carol", 3), ("dave", 4)]
    assert waiters(scenario.state) == ["erin"]


def test_a_newcomer_never_jumps_the_line_even_when_a_slot_looks_free() -> None:
    scenario = given(acquire(capacity=1), acquire("bob", wait=True))
    scenario.and_(Declare(repo="demo", name="build", capacity=1, expected_revision=3))
    scenario.when(acquire("carol")).raises("resource_busy")


def test_an_expired_grant_frees_its_slot_for_the_first_waiter() -> None:
    scenario = given(acquire(capacity=1, ttl=30), acquire("bob", wait=True)).after(30)
    scenario.when(expire).then(
        ev(e.RESOURCE_EXPIRED, fencingToken=1, holder="alice"),
        ev(e.RESOURCE_GRANTED, principal="bob", fencingToken=2),
    )


def test_nothing_expires_before_the_deadline() -> None:
    given(acquire(ttl=30)).after(29).when(expire).then()


def test_a_renewal_extends_the_grant_and_counts_its_lease_revision() -> None:
    scenario = given(acquire(ttl=30)).after(20)
    scenario.when(
        Renew(repo="demo", name="build", fencing_token=1, expected_lease_revision=1, ttl_seconds=30)
    ).then(
        ev(
            e.RESOURCE_RENEWED,
            fencingToken=1,
            leaseRevision=2,
            expiresAt="2026-01-01T00:00:50.000000Z",
        )
    )


def test_a_renewal_naming_an_old_lease_revision_is_a_revision_conflict() -> None:
    renew = Renew(
        repo="demo", name="build", fencing_token=1, expected_lease_revision=1, ttl_seconds=9
    )
    given(acquire(), renew).when(renew).raises("revision_conflict", expected=1, actual=2)


def test_a_renewal_or_release_with_a_released_token_is_a_stale_fencing_token() -> None:
    scenario = given(
        acquire(capacity=1),
        acquire("bob", wait=True),
        Release(repo="demo", name="build", by="alice", fencing_token=1),
    )
    renew = Renew(
        repo="demo", name="build", fencing_token=1, expected_lease_revision=1, ttl_seconds=9
    )
    scenario.when(renew).raises("stale_fencing_token", expected=2, actual=1)
    scenario.when(Release(repo="demo", name="build", by="alice", fencing_token=1)).raises(
        "stale_fencing_token"
    )


def test_a_renewal_after_the_sweep_expired_the_grant_is_lease_expired() -> None:
    scenario = given(acquire(ttl=30)).after(31).and_(expire)
    renew = Renew(
        repo="demo", name="build", fencing_token=1, expected_lease_revision=1, ttl_seconds=9
    )
    scenario.when(renew).raises("lease_expired", fencingToken=1)


def test_a_waiter_leaves_the_line_with_its_ticket() -> None:
    scenario = given(acquire(capacity=1), acquire("bob", wait=True))
    [ticket] = [w.ticket for w in scenario.state.resources["demo:build"].waiters]
    scenario.when(Release(repo="demo", name="build", by="bob", ticket=ticket)).then(
        ev(e.RESOURCE_LEFT_QUEUE, ticket=ticket)
    )


def test_an_admins_release_of_anothers_grant_is_recorded_forced() -> None:
    given(acquire()).when(Release(repo="demo", name="build", by="root", fencing_token=1)).then(
        ev(e.RESOURCE_RELEASED, holder="alice", forced=True)
    )


def test_a_larger_capacity_lets_the_waiters_in_and_a_smaller_one_revokes_nothing() -> None:
    scenario = given(acquire(capacity=1), acquire("bob", wait=True))
    scenario.when(Declare(repo="demo", name="build", capacity=2, expected_revision=3)).then(
        ev(e.RESOURCE_DECLARED, capacity=2, previousCapacity=1),
        ev(e.RESOURCE_GRANTED, principal="bob"),
    )
    scenario.and_(Declare(repo="demo", name="build", capacity=2, expected_revision=3))
    scenario.when(Declare(repo="demo", name="build", capacity=1, expected_revision=5)).then(
        ev(e.RESOURCE_DECLARED, capacity=1)
    )


def test_a_declaration_names_the_revision_it_read() -> None:
    given().when(Declare(repo="demo", name="db:test", capacity=2, expected_revision=4)).raises(
        "revision_conflict", expected=4, actual=0
    )
    given(acquire()).when(
        Declare(repo="demo", name="build", capacity=2, expected_revision=1)
    ).raises("revision_conflict", expected=1, actual=2)


def test_the_counter_hands_out_the_next_number_and_honours_at_least() -> None:
    scenario = given(NextNumber(repo="demo", name="migrations"))
    assert scenario.state.resources["demo:migrations"].last_number == 1
    scenario.when(NextNumber(repo="demo", name="migrations")).then(
        ev(e.RESOURCE_NUMBER_ISSUED, number=2)
    )
    scenario.when(NextNumber(repo="demo", name="migrations", at_least=42)).then(
        ev(e.RESOURCE_NUMBER_ISSUED, number=42)
    )
    scenario.and_(NextNumber(repo="demo", name="migrations", at_least=42))
    scenario.when(NextNumber(repo="demo", name="migrations", at_least=3)).then(
        ev(e.RESOURCE_NUMBER_ISSUED, number=43)
    )


@pytest.mark.parametrize(
    ("command", "field"),
    [
        (acquire(name="Build"), "name"),
        (acquire(name="a/b"), "name"),
        (acquire(name=""), "name"),
        (acquire(ttl=0), "ttlSeconds"),
        (acquire(capacity=0), "capacity"),
        (acquire(capacity=1001), "capacity"),
        (acquire(note="x" * 5000), "note"),
        (NextNumber(repo="demo", name="migrations", at_least=0), "atLeast"),
        (Release(repo="demo", name="build", by="alice"), "fencingToken"),
    ],
)
def test_bad_input_is_a_validation_error_naming_the_field(command: object, field: str) -> None:
    given(acquire()).when(command).raises("validation_error", field=field)


def test_an_acquire_naming_another_capacity_than_declared_is_refused() -> None:
    given(acquire(capacity=2)).when(acquire("bob", capacity=3)).raises(
        "validation_error", field="capacity"
    )


def test_an_unknown_resource_is_not_found() -> None:
    renew = Renew(
        repo="demo", name="port:5432", fencing_token=1, expected_lease_revision=1, ttl_seconds=9
    )
    given().when(renew).raises("not_found", resource="port:5432")


def test_the_invariants_catch_a_free_slot_left_while_a_request_waits() -> None:
    from detente.domain.invariants import state_violations

    declared = e.Event(
        "evt_1", e.RESOURCE_DECLARED, "resource/demo:build", {"resource": "build", "capacity": 1}
    )
    queued = e.Event(
        "evt_2",
        e.RESOURCE_QUEUED,
        "resource/demo:build",
        {"resource": "build", "ticket": "tkt_1", "principal": "bob", "ttlSeconds": 60},
    )
    broken = given(declared, queued).state
    assert state_violations(broken) == [
        "resource build has 1 free slot(s) while 1 request(s) wait in line"
    ]
    served = given(acquire(capacity=1), acquire("bob", wait=True)).state
    assert state_violations(served) == []
