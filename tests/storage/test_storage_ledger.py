"""The replay ledger: keys remembered with an expiry, shared through the store's database.

Two ledger objects on one SQLite file or one PostgreSQL database stand for two server
processes (each has its own connection); the memory ledger is one process's own.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from detente.storage.ledger import MemoryLedger, ReplayLedger, SqliteLedger, ledger_for
from detente.storage.ledger_etcd import EtcdLedger
from detente.storage.ledger_postgres import PostgresLedger
from detente.storage.sqlite import SqliteStore
from storage.servers import EtcdCluster, PostgresServer


@pytest.fixture(params=["sqlite", "postgres", "etcd"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[ReplayLedger, ...]]:
    """Two ledgers over one database, as two servers on one store have."""
    if request.param == "sqlite":
        SqliteStore(tmp_path / "d.db").close()  # the store's file exists first
        ledgers: tuple[SqliteLedger | PostgresLedger | EtcdLedger, ...] = (
            SqliteLedger(tmp_path / "d.db"),
            SqliteLedger(tmp_path / "d.db"),
        )
    elif request.param == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        url = server.new_database()
        ledgers = (PostgresLedger(url), PostgresLedger(url))
    else:
        cluster: EtcdCluster = request.getfixturevalue("etcd_cluster")
        url = cluster.url(f"ledger{uuid.uuid4().hex[:8]}")
        ledgers = (EtcdLedger(url), EtcdLedger(url))
    yield ledgers
    for ledger in ledgers:
        ledger.close()


def test_a_key_is_new_once_then_a_reuse_for_every_process_until_it_expires(
    pair: tuple[ReplayLedger, ReplayLedger],
) -> None:
    first, second = pair
    assert first.first_use("nonce-1", now=1000.0, expires_at=1600.0) is True
    assert first.first_use("nonce-1", now=1001.0, expires_at=1601.0) is False
    assert second.first_use("nonce-1", now=1002.0, expires_at=1602.0) is False
    assert second.first_use("nonce-2", now=1002.0, expires_at=1602.0) is True
    assert second.first_use("nonce-1", now=1600.0, expires_at=2200.0) is True  # expired
    assert first.first_use("nonce-1", now=1601.0, expires_at=2201.0) is False


def test_a_kept_value_is_read_by_every_process_until_it_expires(
    pair: tuple[ReplayLedger, ReplayLedger],
) -> None:
    first, second = pair
    assert second.get("answer", now=0.0) is None
    first.put("answer", b"\x00201 created", expires_at=100.0)
    assert second.get("answer", now=99.0) == b"\x00201 created"
    assert second.get("answer", now=100.0) is None
    second.put("answer", b"replaced", expires_at=300.0)
    assert first.get("answer", now=150.0) == b"replaced"


def test_the_memory_ledger_has_the_same_rules_within_one_process() -> None:
    ledger = MemoryLedger()
    assert ledger.first_use("k", now=0.0, expires_at=10.0) is True
    assert ledger.first_use("k", now=5.0, expires_at=15.0) is False
    assert ledger.first_use("k", now=10.0, expires_at=20.0) is True
    ledger.put("v", b"x", expires_at=10.0)
    assert (ledger.get("v", now=9.0), ledger.get("v", now=10.0)) == (b"x", None)


def test_each_store_gets_one_ledger_in_its_own_database(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d.db")
    try:
        ledger = ledger_for(store)
        assert isinstance(ledger, SqliteLedger) and ledger.path == store.path
        assert ledger_for(store) is ledger
        assert ledger.first_use("k", now=0.0, expires_at=10.0) is True
    finally:
        store.close()
    reopened = SqliteStore(tmp_path / "d.db")
    try:
        assert ledger_for(reopened).first_use("k", now=1.0, expires_at=11.0) is False
    finally:
        reopened.close()
