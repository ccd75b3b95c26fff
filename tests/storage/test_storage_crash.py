"""Crash safety: kill -9 a detente server, or one etcd member, in the middle of a write load."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import httpx
import pytest

from detente.clock import SystemClock
from detente.errors import DetenteError
from detente.service import RepoConfig, Service
from detente.storage.factory import open_store
from storage.live import wait_until
from storage.servers import EtcdCluster, PostgresServer, _wait_for_port, free_port

from support import claim_body, seed

_SERVER = textwrap.dedent(
    """
    import sys
    import uvicorn
    from detente.api.app import create_app
    from detente.service import RepoConfig, Service
    from detente.storage.clock import default_clock
    from detente.storage.factory import open_store
    store = open_store(sys.argv[1])
    service = Service(store, default_clock(store), [RepoConfig("demo")])
    app = create_app(service, sweep_interval=0.5)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    """
)


def _assert_nothing_acknowledged_was_lost(url: str, acknowledged: set[str]) -> None:
    store = open_store(url)
    service = Service(store, SystemClock(), [RepoConfig("demo")])
    try:
        stored = {c.id for c in service.claims.list_claims()}
        assert acknowledged <= stored, f"lost: {sorted(acknowledged - stored)}"
        report = service.audit()
        assert report.ok, report.to_wire()
        assert report.events >= 2 * len(acknowledged)
    finally:
        store.close()


@pytest.mark.slow
def test_kill_9_of_a_server_under_write_load_on_postgres_loses_no_acknowledged_claim(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.new_database()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", _SERVER, url, str(port)])
    acknowledged: set[str] = set()
    lock = threading.Lock()
    try:
        _wait_for_port(port, proc, "detente server")

        def load(worker: int) -> None:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
                for n in range(10_000):
                    try:
                        r = http.post("/v1/claims", json=claim_body(f"w{worker}/{n}.py", ttl=5))
                    except httpx.HTTPError:
                        return  # the server is gone
                    if r.status_code == 201:
                        with lock:
                            acknowledged.add(r.json()["claim"]["id"])

        workers = [threading.Thread(target=load, args=(w,)) for w in range(4)]
        for w in workers:
            w.start()
        wait_until(lambda: len(acknowledged) >= 80, 60, "80 claims are acknowledged")
        proc.kill()
        proc.wait(timeout=10)
        for w in workers:
            w.join(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    _assert_nothing_acknowledged_was_lost(url, acknowledged)


@pytest.mark.slow
def test_kill_9_of_one_etcd_member_under_write_load_loses_no_acknowledged_claim(
    etcd_cluster: EtcdCluster,
) -> None:
    url = etcd_cluster.url()
    store = open_store(url)
    service = Service(store, SystemClock(), [RepoConfig("demo")])
    acknowledged: list[str] = []
    failures: list[str] = []
    stop = threading.Event()

    def load() -> None:
        n = 0
        while not stop.is_set() and n < 5000:
            try:
                acknowledged.append(service.claims.open_claim(seed(f"e/{n}.py", ttl=600)).claim.id)
            except DetenteError as exc:  # not acknowledged: allowed while electing a leader
                failures.append(exc.code)
            n += 1

    writer = threading.Thread(target=load)
    writer.start()
    try:
        wait_until(lambda: len(acknowledged) >= 30, 60, "30 claims before the kill")
        etcd_cluster.kill(0)  # the member this store talks to first
        after_kill = len(acknowledged)
        wait_until(lambda: len(acknowledged) >= after_kill + 30, 60, "30 claims after the kill")
    finally:
        stop.set()
        writer.join(timeout=60)
        etcd_cluster.restart(0)
    store.close()
    _assert_nothing_acknowledged_was_lost(url, set(acknowledged))


def _kill_9_under_batched_renewals(url: str) -> None:
    """16 clients renew their own claim as fast as they can (the server group-commits
    their renewals into shared transactions) while 4 more open claims; kill -9 mid-load.
    Every acknowledged renewal and claim must be in the log afterwards."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", _SERVER, url, str(port)])
    acknowledged: set[str] = set()
    renewed: dict[str, int] = {}
    lock = threading.Lock()
    try:
        _wait_for_port(port, proc, "detente server")
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=10) as http:
            holders = [
                http.post("/v1/claims", json=claim_body(f"r{i}/**", agent=f"r{i}", ttl=600))
                .raise_for_status()
                .json()["claim"]
                for i in range(16)
            ]

        def renew(claim: dict[str, object]) -> None:
            with httpx.Client(base_url=base, timeout=10) as http:
                for _ in range(10_000):
                    lease = claim["lease"]
                    assert isinstance(lease, dict)
                    body = {
                        "expectedLeaseRevision": lease["revision"],
                        "expectedClaimRevision": claim["revision"],
                        "ttlSeconds": 600,
                    }
                    try:
                        r = http.post(f"/v1/claims/{claim['id']}/renew", json=body)
                    except httpx.HTTPError:
                        return  # the server is gone
                    if r.status_code != 200:
                        return
                    claim = r.json()["claim"]
                    with lock:
                        renewed[str(claim["id"])] = int(claim["lease"]["revision"])

        def open_claims(worker: int) -> None:
            with httpx.Client(base_url=base, timeout=10) as http:
                for n in range(10_000):
                    try:
                        r = http.post("/v1/claims", json=claim_body(f"o{worker}/{n}.py", ttl=600))
                    except httpx.HTTPError:
                        return
                    if r.status_code == 201:
                        with lock:
                            acknowledged.add(r.json()["claim"]["id"])

        workers = [threading.Thread(target=renew, args=(c,)) for c in holders]
        workers += [threading.Thread(target=open_claims, args=(w,)) for w in range(4)]
        for w in workers:
            w.start()
        wait_until(lambda: sum(renewed.values()) >= 16 * 5, 60, "80 renewals are acknowledged")
        proc.kill()
        proc.wait(timeout=10)
        for w in workers:
            w.join(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    store = open_store(url)
    service = Service(store, SystemClock(), [RepoConfig("demo")])
    try:
        state = service.fresh("demo")
        for claim_id, revision in renewed.items():
            assert state.claims[claim_id].lease.revision >= revision, claim_id
        assert acknowledged <= set(state.claims)
        report = service.audit()
        assert report.ok, report.to_wire()
    finally:
        store.close()


@pytest.mark.slow
def test_kill_9_during_group_committed_renewals_on_sqlite_loses_no_acknowledged_write(
    tmp_path: Path,
) -> None:
    _kill_9_under_batched_renewals(f"sqlite:///{tmp_path / 'detente.db'}")


@pytest.mark.slow
def test_kill_9_during_group_committed_renewals_on_postgres_loses_no_acknowledged_write(
    postgres_server: PostgresServer,
) -> None:
    _kill_9_under_batched_renewals(postgres_server.new_database())
