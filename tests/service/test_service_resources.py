"""Shared resources through the command path: racing acquirers, expiry across two servers
on one SQLite file, the number counter under races, fencing, snapshots and the audit.

The ``service`` fixture (``tests/conftest.py``) runs each test on the memory, SQLite,
PostgreSQL and etcd stores."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.resources.commands import Acquire, NextNumber, Release, Renew
from detente.errors import DetenteError, ResourceBusy, StaleFencingToken, ValidationError
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

RACERS = 5


def acquire(who: str, *, ttl: int = 60, name: str = "build", **kw: object) -> Acquire:
    return Acquire(repo="demo", name=name, principal=who, ttl_seconds=ttl, **kw)  # type: ignore[arg-type]


def race(jobs: list[Callable[[], object]]) -> list[object]:
    """Run ``jobs`` at once (released together by a barrier); their answers or errors."""
    barrier = threading.Barrier(len(jobs))
    out: list[object] = [None] * len(jobs)

    def run(i: int) -> None:
        barrier.wait(timeout=10)
        try:
            out[i] = jobs[i]()
        except DetenteError as exc:
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    return out


def event_types(service: Service, of: str) -> list[str]:
    events, _ = service.events(limit=1000)
    return [e.type for e in events if e.type == of]


def test_five_racing_acquirers_of_two_slots_two_hold_and_the_rest_are_served_in_order(
    service: Service,
) -> None:
    service.resources.acquire(acquire("setup", capacity=2, ttl=1))
    service.resources.release(Release(repo="demo", name="build", by="setup", fencing_token=1))
    names = [f"agent{i}" for i in range(RACERS)]
    answers = race([lambda n=n: service.resources.acquire(acquire(n, wait=True)) for n in names])
    assert not [a for a in answers if isinstance(a, DetenteError)]
    resource = service.resources.get("build")
    assert len(resource.holders) == 2
    line = [w.principal for w in resource.waiters]
    assert len(line) == RACERS - 2
    # The line is the order the log queued them in; each release serves its head.
    for expected_next in line:
        first = resource.holders[0]
        service.resources.release(
            Release(
                repo="demo", name="build", by=first.principal, fencing_token=first.fencing_token
            )
        )
        resource = service.resources.get("build")
        assert resource.holders[-1].principal == expected_next
        assert len(resource.holders) == 2
    tokens = [g.fencing_token for g in resource.holders]
    assert tokens == sorted(tokens) and len(set(tokens)) == 2
    assert service.audit().ok


def test_racing_acquirers_without_wait_get_exactly_the_free_slots_and_resource_busy(
    service: Service,
) -> None:
    service.resources.acquire(acquire("setup", capacity=2, ttl=1))
    service.resources.release(Release(repo="demo", name="build", by="setup", fencing_token=1))
    answers = race([lambda n=n: service.resources.acquire(acquire(f"a{n}")) for n in range(5)])
    busy = [a for a in answers if isinstance(a, ResourceBusy)]
    assert len(busy) == 3 and len(service.resources.get("build").holders) == 2


def test_expiry_frees_a_slot_exactly_once_across_two_servers_on_one_sqlite_file(
    tmp_path: Path, clock: FakeClock
) -> None:
    stores = [SqliteStore(tmp_path / "shared.db") for _ in range(2)]
    servers = [Service(s, clock, [RepoConfig("demo")]) for s in stores]
    try:
        one, two = servers
        held = one.resources.acquire(acquire("alice", capacity=1, ttl=30))
        two.resources.acquire(acquire("bob", wait=True))
        clock.advance(31)
        race([lambda s=s: s.sweep() for s in servers * 2])
        assert event_types(one, "resource.expired") == ["resource.expired"]
        for server in servers:
            resource = server.resources.get("build")
            assert [g.principal for g in resource.holders] == ["bob"]
            assert resource.holders[0].fencing_token > (held.fencing_token or 0)
            assert resource.waiters == ()
        grants = event_types(two, "resource.granted")
        assert len(grants) == 2  # alice's, then bob's once
        assert one.audit().ok
    finally:
        for s in stores:
            s.close()


def test_the_counter_hands_out_each_number_once_across_two_servers_racing(
    tmp_path: Path, clock: FakeClock
) -> None:
    stores = [SqliteStore(tmp_path / "shared.db") for _ in range(2)]
    servers = [Service(s, clock, [RepoConfig("demo")]) for s in stores]
    try:
        jobs: list[Callable[[], object]] = [
            lambda s=s: s.resources.next_number(NextNumber(repo="demo", name="migrations"))
            for s in servers
            for _ in range(4)
        ]
        answers = race(jobs)
        numbers = sorted(a.number for a in answers)  # type: ignore[attr-defined]
        assert numbers == list(range(1, 9))
        # A restart (a new service on the file) continues after the last one.
        again = Service(SqliteStore(tmp_path / "shared.db"), clock, [RepoConfig("demo")])
        issued = again.resources.next_number(NextNumber(repo="demo", name="migrations"))
        assert (issued.number, issued.to_wire()["label"]) == (9, "0009")
        again.store.close()
    finally:
        for s in stores:
            s.close()


def test_a_release_with_an_old_token_is_refused_and_changes_nothing(
    service: Service, clock: FakeClock
) -> None:
    first = service.resources.acquire(acquire("alice", capacity=1, ttl=30))
    service.resources.release(
        Release(repo="demo", name="build", by="alice", fencing_token=first.fencing_token)
    )
    second = service.resources.acquire(acquire("alice", ttl=30))
    before = service.resources.get("build")
    with pytest.raises(StaleFencingToken):
        service.resources.release(
            Release(repo="demo", name="build", by="alice", fencing_token=first.fencing_token)
        )
    with pytest.raises(StaleFencingToken):
        service.resources.renew(
            Renew(
                repo="demo",
                name="build",
                fencing_token=first.fencing_token or 0,
                expected_lease_revision=1,
                ttl_seconds=30,
            )
        )
    assert service.resources.get("build") == before
    assert (second.fencing_token or 0) > (first.fencing_token or 0)


def test_bad_input_changes_nothing(service: Service) -> None:
    head = service.head()
    for bad in (acquire("alice", ttl=0), acquire("alice", capacity=0)):
        with pytest.raises(ValidationError):
            service.resources.acquire(bad)
    with pytest.raises(ValidationError):
        service.resources.next_number(NextNumber(repo="demo", name="Migrations"))
    assert service.head() == head


def test_a_heartbeat_keeps_the_grant_past_its_first_deadline(
    service: Service, clock: FakeClock
) -> None:
    grant = service.resources.acquire(acquire("alice", ttl=30))
    clock.advance(20)
    service.resources.renew(
        Renew(
            repo="demo",
            name="build",
            fencing_token=grant.fencing_token or 0,
            expected_lease_revision=1,
            ttl_seconds=30,
        )
    )
    clock.advance(20)
    assert service.sweep() == 0
    [holder] = service.resources.get("build").holders
    assert (holder.fencing_token, holder.lease_revision) == (grant.fencing_token, 2)


def test_a_snapshot_carries_the_resources_and_a_restart_continues_their_counters(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "snap.db"
    first = Service(SqliteStore(path), clock, [RepoConfig("demo")])
    first.resources.acquire(acquire("alice", capacity=1))
    first.resources.acquire(acquire("bob", wait=True))
    first.resources.next_number(NextNumber(repo="demo", name="migrations", at_least=7))
    before = first.resources.get("build")
    first.save_snapshots()
    first.store.close()
    again = Service(SqliteStore(path), clock, [RepoConfig("demo")])
    try:
        assert again.resources.get("build") == before
        issued = again.resources.next_number(NextNumber(repo="demo", name="migrations"))
        assert issued.number == 8
        token = again.resources.acquire(acquire("carol", name="db:test")).fencing_token
        assert token is not None and token > max(g.fencing_token for g in before.holders)
        assert again.audit().ok
    finally:
        again.store.close()
