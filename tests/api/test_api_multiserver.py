"""Several detente servers (Service + uvicorn each) on one PostgreSQL database or etcd cluster."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from detente.clock import Clock, FakeClock, SystemClock
from detente.domain.claims.model import ClaimStatus
from detente.service import RepoConfig, Service
from detente.storage.clock import StoreClock, default_clock
from detente.storage.factory import open_store
from storage.live import parse_sse, serving
from storage.servers import EtcdCluster, PostgresServer

from support import claim_body, counting_ids, seed


def _store_url(request: pytest.FixtureRequest, backend: str) -> str:
    if backend == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        return server.new_database()
    cluster: EtcdCluster = request.getfixturevalue("etcd_cluster")
    return cluster.url()


def _services(url: str, count: int, clock: Clock | None = None) -> list[Service]:
    """``count`` services, each with its own store handle, as separate servers have."""
    out = []
    for i in range(count):
        store = open_store(url)
        ids = counting_ids()
        out.append(
            Service(
                store,
                clock or default_clock(store),
                [RepoConfig("demo")],
                ids=lambda p, n=i, ids=ids: f"{ids(p)}_s{n}",
            )
        )
    return out


@pytest.fixture
def two_servers(request: pytest.FixtureRequest) -> Iterator[tuple[list[Service], list[str]]]:
    backend = getattr(request, "param", "postgres")
    services = _services(_store_url(request, backend), 2)
    with ExitStack() as stack:
        bases = [stack.enter_context(serving(s)) for s in services]
        yield services, bases
    for s in services:
        s.store.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("two_servers", "rounds"), [("postgres", 200), ("etcd", 40)], indirect=["two_servers"]
)
def test_racing_claims_on_one_path_through_two_servers_leave_exactly_one_active_each_round(
    two_servers: tuple[list[Service], list[str]], rounds: int
) -> None:
    _, bases = two_servers
    clients = [httpx.Client(base_url=b, timeout=30) for b in bases]
    try:
        for n in range(rounds):
            barrier = threading.Barrier(2)
            statuses: list[str] = []

            def race(
                i: int,
                n: int = n,
                b: threading.Barrier = barrier,
                statuses: list[str] = statuses,
            ) -> None:
                b.wait(timeout=10)
                r = clients[i].post("/v1/claims", json=claim_body(f"hot/{n}.py", agent=f"a{i}"))
                statuses.append(r.json()["claim"]["status"])

            threads = [threading.Thread(target=race, args=(i,)) for i in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            assert sorted(statuses) == ["active", "negotiating"], f"round {n}: {statuses}"
        audit = clients[1].get("/v1/audit/verify").json()
        assert audit["ok"] is True and audit["events"] >= rounds * 4
    finally:
        for c in clients:
            c.close()


def test_a_watcher_on_server_2_resuming_after_n_gets_every_later_event_of_server_1_once_in_order(
    two_servers: tuple[list[Service], list[str]],
) -> None:
    (one, _), (base1, base2) = two_servers
    with httpx.Client(base_url=base1, timeout=30) as http1:
        for n in range(10):
            http1.post("/v1/claims", json=claim_body(f"before/{n}.py"))
        resume_after = 7
        target = one.head() + 40  # 20 more claims, written while the watcher listens
        seen: list[int] = []
        connected = threading.Event()

        def watch() -> None:
            with (
                httpx.Client(base_url=base2, timeout=30) as http2,
                http2.stream(
                    "GET", "/v1/events/stream", headers={"Last-Event-ID": str(resume_after)}
                ) as r,
            ):
                connected.set()
                for message in parse_sse(r.iter_lines()):
                    if "id" in message:
                        seen.append(int(message["id"]))
                        if seen[-1] >= target:
                            return

        watcher = threading.Thread(target=watch)
        watcher.start()
        assert connected.wait(timeout=10)
        for n in range(20):
            http1.post("/v1/claims", json=claim_body(f"during/{n}.py"))
        watcher.join(timeout=60)
    assert seen == list(range(resume_after + 1, target + 1))


def test_sweepers_on_both_servers_expire_each_lease_exactly_once(
    request: pytest.FixtureRequest,
) -> None:
    clock = FakeClock()
    services = _services(_store_url(request, "postgres"), 2, clock)
    claims = [services[i % 2].claims.open_claim(seed(f"s/{i}.py", ttl=30)).claim for i in range(10)]
    clock.advance(31)
    counts: list[int] = []
    threads = [threading.Thread(target=lambda s=s: counts.append(s.sweep())) for s in services * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sum(counts) == len(claims)
    events, _ = services[0].events(limit=1000)
    expired = [e.subject for e in events if e.type == "claim.expired"]
    assert sorted(expired) == sorted(f"claim/{c.id}" for c in claims)
    assert all(c.status is ClaimStatus.EXPIRED for c in services[1].claims.list_claims())
    assert services[1].audit().ok
    for s in services:
        s.store.close()


def test_servers_with_skewed_machine_clocks_take_lease_time_from_the_database(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    skewed = datetime(1999, 1, 1, tzinfo=UTC)
    monkeypatch.setattr(SystemClock, "now", lambda self: skewed)
    url = _store_url(request, "postgres")
    services = _services(url, 2)
    assert all(isinstance(s.clock.inner, StoreClock) for s in services)
    before = datetime.now(UTC)
    views = [s.claims.open_claim(seed(f"k/{i}.py", ttl=60)) for i, s in enumerate(services)]
    after = datetime.now(UTC)
    for view in views:
        deadline = view.claim.lease.expires_at
        assert before + timedelta(seconds=59) <= deadline <= after + timedelta(seconds=61)
    for s in services:
        s.store.close()
