"""etcd-specific guarantees: compaction keeps the history, requests fail over across members."""

from __future__ import annotations

import asyncio
import threading

import aetcd
import pytest

from detente.clock import FakeClock
from detente.errors import ConcurrencyError, StoreError, ValidationError
from detente.eventlog.envelope import GENESIS_HASH, verify_link
from detente.service import RepoConfig, Service
from detente.storage.base import NewEvent
from detente.storage.etcd import EtcdStore, parse_etcd_url, parse_max_txn_ops
from detente.storage.factory import open_store
from storage.servers import EtcdCluster

from support import counting_ids, seed


def _append(store: EtcdStore | object, n: int, subject: str = "claim/c") -> None:
    assert isinstance(store, EtcdStore)
    with store.transaction("demo") as tx:
        tx.append(
            [NewEvent(f"e{subject}{n}", "claim.announced", 1, "demo", subject, {"n": n}, "t")],
            {subject: n},
        )


def _compact_everything(cluster: EtcdCluster) -> None:
    async def compact() -> None:
        port = cluster.members[1].client_port
        async with aetcd.Client(host="127.0.0.1", port=port) as client:
            revision = (await client.put(b"/compaction-probe", b"x")).header.revision
            await client.compact(revision, physical=True)

    asyncio.run(compact())


def test_etcd_urls_name_every_endpoint_and_an_optional_prefix() -> None:
    assert parse_etcd_url("etcd://a:1,b:2/team") == ([("a", 1), ("b", 2)], "team")
    assert parse_etcd_url("etcd://a:1") == ([("a", 1)], "detente")
    assert parse_etcd_url("etcd://a:1/team?max_txn_ops=1024") == ([("a", 1)], "team")
    for bad in ("etcd://", "etcd://a", "etcd://a:x"):
        with pytest.raises(ValidationError):
            parse_etcd_url(bad)


def test_the_transaction_limit_comes_from_the_url_and_defaults_to_etcds_own() -> None:
    assert parse_max_txn_ops("etcd://a:1/p?max_txn_ops=1024") == 1024
    assert parse_max_txn_ops("etcd://a:1/p") == 128
    with pytest.raises(ValidationError, match="max_txn_ops"):
        parse_max_txn_ops("etcd://a:1/p?max_txn_ops=lots")


@pytest.mark.timeout(120)
def test_256_leases_expiring_at_once_are_committed_in_batches_and_the_repo_stays_usable(
    etcd_cluster: EtcdCluster,
) -> None:
    """256 expiries in one Txn need 4 * 256 + 1 operations: more than the cluster's
    ``--max-txn-ops 1024``. Batches bounded by the limit keep every later command working."""
    store = open_store(etcd_cluster.url() + "?max_txn_ops=1024")
    clock = FakeClock()
    service = Service(store, clock, [RepoConfig("demo")], ids=counting_ids())
    for n in range(256):
        service.claims.open_claim(seed(f"src/f{n}.py", ttl=60))
    clock.advance(61)
    after = service.claims.open_claim(seed("src/after.py"))
    assert after.claim.status.value == "active"
    claims = service.claims.list_claims()
    assert sum(c.status.value == "expired" for c in claims) == 256
    assert service.audit().ok
    store.close()


@pytest.mark.timeout(15)
def test_an_unreachable_cluster_is_store_unavailable_naming_its_endpoints() -> None:
    from storage.servers import free_port

    port = free_port()
    with pytest.raises(StoreError) as info:
        open_store(f"etcd://127.0.0.1:{port}")
    assert info.value.code == "store_unavailable"
    assert f"etcd at 127.0.0.1:{port}" in info.value.detail
    assert "AioRpcError" not in info.value.detail and "debug_error_string" not in info.value.detail


def test_compacting_every_old_revision_loses_no_event_and_the_log_continues(
    etcd_cluster: EtcdCluster,
) -> None:
    store = open_store(etcd_cluster.url())
    for n in range(12):
        _append(store, n)
    _compact_everything(etcd_cluster)
    assert [e.seq for e in store.read(limit=100)] == list(range(1, 13))
    _append(store, 12)
    prev = GENESIS_HASH
    for i, event in enumerate(store.iter_all(batch=5), start=1):
        assert verify_link(event, prev, i) is None
        prev = event.hash
    assert store.head() == (13, prev)
    store.close()


def test_a_watcher_is_still_woken_after_a_compaction(etcd_cluster: EtcdCluster) -> None:
    store = open_store(etcd_cluster.url())
    assert isinstance(store, EtcdStore)
    heard = threading.Event()
    seqs: list[int] = []

    def on_commit(seq: int) -> None:
        seqs.append(seq)
        if seq >= 3:
            heard.set()

    unlisten = store.listen(on_commit)
    _append(store, 0)
    _compact_everything(etcd_cluster)
    for n in range(1, 40):
        _append(store, n)
        if heard.wait(timeout=0.25):
            break
    unlisten()
    assert heard.is_set() and max(seqs) >= 3
    store.close()


def test_requests_fail_over_when_the_first_endpoint_is_down(etcd_cluster: EtcdCluster) -> None:
    url = etcd_cluster.url()
    store = open_store(url)
    _append(store, 0)
    etcd_cluster.kill(0)
    try:
        second = open_store(url)  # the dead member is listed first
        _append(second, 1)
        with pytest.raises(ConcurrencyError):  # from the head it last wrote: seq 2 is taken
            _append(store, 2)
        _append(store, 2)  # after a lost race it reads the head (through a live member)
        assert [e.seq for e in second.read()] == [1, 2, 3]
        second.close()
    finally:
        etcd_cluster.restart(0)
    store.close()


def test_a_cluster_with_no_reachable_member_is_store_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from detente.storage import etcd as etcd_module
    from storage.servers import free_port

    monkeypatch.setattr(etcd_module, "FAILOVER_SECONDS", 1.0)
    with pytest.raises(StoreError) as info:
        EtcdStore([("127.0.0.1", free_port())])
    assert info.value.code == "store_unavailable"
