"""A stalled (SIGSTOP) or killed store under a write load: clients get ``store_unavailable``
(503), nothing is half-written, and the service resumes by itself when the store returns."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from detente.service import RepoConfig, Service
from detente.storage.clock import default_clock
from detente.storage.factory import open_store
from detente.storage.postgres import PostgresStore
from storage.live import serving, wait_until
from storage.servers import EtcdCluster, PostgresServer, postgres_bindir, require_binary

from support import claim_body


class Load:
    """One client opening claims over HTTP until stopped; keeps what was acknowledged and
    the codes of the problems it got."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.acknowledged: list[str] = []
        self.codes: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=60) as http:
            n = 0
            while not self.stop.is_set():
                n += 1
                r = http.post("/v1/claims", json=claim_body(f"load/{n}.py", ttl=600))
                if r.status_code == 201:
                    self.acknowledged.append(r.json()["claim"]["id"])
                else:
                    assert r.headers["content-type"].startswith("application/problem+json")
                    self.codes.append(f"{r.status_code} {r.json()['code']}")

    def unavailable(self) -> int:
        return self.codes.count("503 store_unavailable")

    def wait_for_more(self, what: str) -> None:
        seen = len(self.acknowledged)
        wait_until(lambda: len(self.acknowledged) >= seen + 5, 60, what)

    def wait_for_unavailable(self, what: str) -> None:
        seen = self.unavailable()
        wait_until(lambda: self.unavailable() > seen, 60, f"{what} (got {self.codes[-3:]})")


@contextmanager
def _loaded(service: Service) -> Iterator[Load]:
    with serving(service) as base:
        load = Load(base)
        load.thread.start()
        try:
            load.wait_for_more("the first writes are acknowledged")
            yield load
        finally:
            load.stop.set()
            load.thread.join(timeout=90)
    assert not load.thread.is_alive()
    other = [c for c in load.codes if c != "503 store_unavailable"]
    assert other == [], other


def _assert_intact(service: Service, load: Load) -> None:
    stored = {c.id for c in service.claims.list_claims()}
    assert set(load.acknowledged) <= stored
    report = service.audit()
    assert report.ok, report.to_wire()


def _family(pid: int) -> list[int]:
    """``pid`` and its descendants (a PostgreSQL backend is a session of its own, so the
    postmaster's process group does not hold it)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    family, todo = [], [pid]
    while todo:
        member = todo.pop()
        family.append(member)
        todo.extend(children.get(member, []))
    return family


def _signal_all(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            continue


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_stalled_then_killed_postgres_is_store_unavailable_and_writes_resume_after(
    tmp_path: Path,
) -> None:
    bindir = require_binary("PostgreSQL (initdb)", postgres_bindir())
    server = PostgresServer(bindir, durable=True).start()  # acknowledged commits survive kill -9
    try:
        store = PostgresStore(server.new_database(), io_timeout=2.0)
        service = Service(store, default_clock(store), [RepoConfig("demo")])
        with _loaded(service) as load:
            assert server.proc is not None
            stalled = _family(server.proc.pid)
            _signal_all(stalled, signal.SIGSTOP)
            try:
                load.wait_for_unavailable("a write against the stalled database fails")
            finally:
                _signal_all(stalled, signal.SIGCONT)
            load.wait_for_more("writes resume once the database runs again")
            _signal_all(_family(server.proc.pid), signal.SIGKILL)
            server.proc.wait(timeout=30)
            load.wait_for_unavailable("a write against the killed database fails")
            server.restart()
            load.wait_for_more("writes resume once the database is back")
        _assert_intact(service, load)
        store.close()
    finally:
        server.close()


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_stalled_then_killed_etcd_cluster_is_store_unavailable_and_writes_resume_after(
    etcd_cluster: EtcdCluster,
) -> None:
    store = open_store(etcd_cluster.url())
    service = Service(store, default_clock(store), [RepoConfig("demo")])
    with _loaded(service) as load:
        stalled = [m.proc.pid for m in etcd_cluster.members if m.proc is not None]
        _signal_all(stalled, signal.SIGSTOP)
        try:
            load.wait_for_unavailable("a write against the stalled cluster fails")
        finally:
            _signal_all(stalled, signal.SIGCONT)
        load.wait_for_more("writes resume once the cluster runs again")
        etcd_cluster.kill_all()
        try:
            load.wait_for_unavailable("a write against the killed cluster fails")
        finally:
            etcd_cluster.restart_all()
        load.wait_for_more("writes resume once the cluster is back")
    _assert_intact(service, load)
    store.close()
