"""Heartbeats that cost what they change: on a store with lease rows a renewal moves the
claim's lease row and appends no event; the log names renewed leases in periodic
``lease.checkpoint`` events, and every reader (a restart, another process, the audit)
folds the rows after the log."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from detente.clock import FakeClock, format_time
from detente.domain.claims.commands import ChangeObjective, RenewLease
from detente.domain.claims.model import Claim
from detente.domain.claims.record import claim_to_wire
from detente.domain.policy import Policy
from detente.domain.state import RepoState
from detente.errors import LeaseExpired
from detente.eventlog.projections import apply_stored
from detente.service import RepoConfig, Service
from detente.storage.base import Store
from detente.storage.etcd import parse_etcd_url
from detente.storage.etcd_layout import EtcdKeys, lease_from_json, lease_to_json
from detente.storage.factory import open_store
from detente.storage.sqlite import SqliteStore
from storage.servers import EtcdCluster

from support import counting_ids, seed

CHECKPOINT = 60


def _service(store: Store, clock: FakeClock, ids: Callable[[str], str] | None = None) -> Service:
    policy = Policy(lease_checkpoint_seconds=CHECKPOINT)
    return Service(store, clock, [RepoConfig("demo")], policy=policy, ids=ids or counting_ids())


def _renew(service: Service, claim: Claim, ttl: int = 300) -> Claim:
    cmd = RenewLease(claim.id, claim.lease.revision, claim.revision, ttl)
    return service.claims.renew(cmd).claim


def _replay(store: Store) -> RepoState:
    state = RepoState("demo")
    for event in store.iter_all():
        apply_stored(state, event)
    return state


@pytest.fixture(params=["sqlite", "postgres", "etcd"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Store]:
    """Opens another store on one shared place (a process, or a server, each)."""
    if request.param == "sqlite":
        return lambda: SqliteStore(tmp_path / "d.db")
    if request.param == "etcd":
        url = request.getfixturevalue("etcd_cluster").url()
    else:
        url = request.getfixturevalue("postgres_server").new_database()
    return lambda: open_store(url)


def test_a_renewal_moves_the_deadline_and_appends_no_event(store: Store, clock: FakeClock) -> None:
    service = _service(store, clock)
    claim = service.claims.open_claim(seed("src/**", ttl=60)).claim
    head = service.head()
    renewed = _renew(service, claim)
    assert service.head() == head
    assert renewed.lease.revision == claim.lease.revision + 1
    assert renewed.lease.expires_at == clock.now() + timedelta(seconds=300)
    assert renewed.revision == claim.revision  # a heartbeat is not a change of the claim
    [row] = [r for r in store.records("claim") if r.id == claim.id]
    assert row.body["lease"]["revision"] == renewed.lease.revision  # the row is current
    assert service.audit().ok


def test_the_record_row_a_renewal_writes_is_the_whole_current_record_even_after_other_changes(
    store: Store, clock: FakeClock
) -> None:
    service = _service(store, clock)
    claim = service.claims.open_claim(seed("src/**", ttl=60)).claim

    def stored() -> dict[str, object]:
        [row] = [r for r in store.records("claim") if r.id == claim.id]
        current = service.claims.get_claim(claim.id).claim
        assert (row.revision, row.status) == (current.revision, current.status.value)
        return dict(row.body)

    claim = _renew(service, claim)
    claim = _renew(service, claim)  # only the lease member is rewritten: still the record
    assert stored() == claim_to_wire(claim)
    changed = ChangeObjective(claim.id, claim.revision, "alice now rewrites src/")
    claim = service.claims.change_objective(changed).claim
    clock.advance(5)
    claim = _renew(service, claim)  # the remembered row is stale: built again
    assert stored() == claim_to_wire(claim)
    assert stored()["objective"] == "alice now rewrites src/"
    assert service.audit().ok


def test_renewed_leases_are_named_in_one_checkpoint_after_the_period(
    store: Store, clock: FakeClock
) -> None:
    service = _service(store, clock)
    a = service.claims.open_claim(seed("a/**", ttl=600)).claim
    b = service.claims.open_claim(seed("b/**", ttl=600, agent="bob")).claim
    for _ in range(5):
        a, b = _renew(service, a, 600), _renew(service, b, 600)
        clock.advance(10)
    head = service.head()
    assert service.sweep() == 0
    assert service.head() == head  # the oldest renewal is 50 s old: not due yet
    clock.advance(CHECKPOINT)
    service.sweep()
    [checkpoint] = service.events(since=head)[0]
    assert checkpoint.type == "lease.checkpoint"
    assert checkpoint.subject == "lease/demo"
    assert checkpoint.data["leases"] == [
        {
            "claimId": c.id,
            "leaseId": c.lease.id,
            "leaseRevision": c.lease.revision,
            "ttlSeconds": 600,
            "expiresAt": format_time(c.lease.expires_at),
        }
        for c in (a, b)
    ]
    replayed = _replay(store)  # the log alone reaches the checkpointed deadlines
    assert replayed.claims[a.id].lease == a.lease
    clock.advance(CHECKPOINT)
    service.sweep()
    assert service.head() == checkpoint.seq  # nothing renewed since: no checkpoint
    assert service.audit().ok


def test_a_restart_recovers_the_exact_deadline_from_the_lease_row(
    tmp_path: Path, clock: FakeClock
) -> None:
    first = _service(SqliteStore(tmp_path / "d.db"), clock)
    claim = first.claims.open_claim(seed("src/**", ttl=60)).claim
    renewed = _renew(first, claim, ttl=3600)
    assert _replay(first.store).claims[claim.id].lease == claim.lease  # not in the log
    first.save_snapshots()
    first.store.close()
    second = _service(SqliteStore(tmp_path / "d.db"), clock)
    clock.advance(120)  # past the deadline the log names, before the row's
    assert second.sweep() == 0
    assert second.claims.get_claim(claim.id).claim.lease == renewed.lease
    second.store.close()


def test_a_lease_renewed_through_one_server_is_not_expired_by_another(
    shared: Callable[[], Store], clock: FakeClock
) -> None:
    names = itertools.count(1)
    a = _service(shared(), clock)
    b = _service(shared(), clock, lambda p: f"{p}_b{next(names):06d}")
    claim = a.claims.open_claim(seed("src/**", ttl=60)).claim
    assert b.claims.get_claim(claim.id).claim.lease == claim.lease  # b folded it
    b.claims.open_claim(seed("docs/**", ttl=6000, agent="bob"))  # b remembers the head
    renewed = _renew(a, claim, ttl=600)
    clock.advance(120)  # past the old deadline, b's projection still holds it
    # b decides a command (and the timeouts) from the head it remembers: its commit must
    # lose the compare to a's renewal, and the command is decided again on fresh state.
    _, stored = b.execute("demo", lambda state: [])
    assert "claim.expired" not in [e.type for e in stored]
    assert b.sweep() == 0
    assert b.claims.get_claim(claim.id).claim.status.value == "active"
    clock.advance(600)
    assert b.sweep() + a.sweep() == 1  # expired exactly once
    with pytest.raises(LeaseExpired):
        _renew(a, renewed)
    assert a.audit().ok and b.audit().ok
    a.store.close()
    b.store.close()


def test_the_audit_reports_a_lease_row_older_than_the_log(tmp_path: Path, clock: FakeClock) -> None:
    service = _service(SqliteStore(tmp_path / "d.db"), clock)
    claim = service.claims.open_claim(seed("src/**", ttl=600)).claim
    for _ in range(3):
        claim = _renew(service, claim, 600)
    clock.advance(CHECKPOINT)
    service.sweep()  # the checkpoint names revision 4
    service.store.close()
    with sqlite3.connect(tmp_path / "d.db") as db:  # someone rolls the row back
        db.execute("UPDATE leases SET revision = 2")
    report = _service(SqliteStore(tmp_path / "d.db"), clock).audit()
    assert not report.ok
    assert f"claim/{claim.id}: lease row at revision 2" in report.mismatches[0]


def test_the_audit_reports_an_etcd_lease_key_older_than_the_log(
    etcd_cluster: EtcdCluster, clock: FakeClock
) -> None:
    url = etcd_cluster.url()
    service = _service(open_store(url), clock)
    claim = service.claims.open_claim(seed("src/**", ttl=600)).claim
    for _ in range(3):
        claim = _renew(service, claim, 600)
    clock.advance(CHECKPOINT)
    service.sweep()  # the checkpoint names revision 4
    service.store.close()
    endpoints, prefix = parse_etcd_url(url)
    key = EtcdKeys(prefix).lease("demo", claim.id)

    import aetcd  # the etcd client (only this case talks to the cluster directly)

    async def roll_back() -> None:  # someone rolls the key back
        host, port = endpoints[0]
        async with aetcd.Client(host=host, port=port) as client:
            held = await client.get(key)
            assert held is not None
            row = replace(lease_from_json(held.value), revision=2)
            await client.put(key, lease_to_json(row))

    asyncio.run(roll_back())
    report = _service(open_store(url), clock).audit()
    assert not report.ok
    assert f"claim/{claim.id}: lease row at revision 2" in report.mismatches[0]
