"""PostgreSQL-specific guarantees: append-only at the storage level, clear failures."""

from __future__ import annotations

import dataclasses
import threading

import psycopg
import pytest

from detente.errors import StoreError
from detente.service import RepoConfig, Service
from detente.storage import rowjson
from detente.storage.base import LeaseRow, NewEvent, RecordRow
from detente.storage.clock import StoreClock
from detente.storage.factory import display_url, open_store
from detente.storage.postgres import APPEND_LOCK, PostgresStore
from detente.storage.postgres_tx import write_params
from storage.servers import PostgresServer, free_port

from support import seed


def test_the_events_table_refuses_update_delete_and_truncate(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.new_database()
    store = open_store(url)
    with store.transaction("demo") as tx:
        tx.append(
            [NewEvent("e1", "claim.announced", 1, "demo", "claim/c", {}, "t")], {"claim/c": 0}
        )
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in ("UPDATE events SET data = '{}'", "DELETE FROM events", "TRUNCATE events"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(statement)
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (1,)


def test_a_write_transaction_holds_the_global_append_lock_until_it_ends(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.new_database()
    store = open_store(url)
    with psycopg.connect(url, autocommit=True) as probe:
        with store.transaction("demo"):
            free = probe.execute("SELECT pg_try_advisory_lock(%s)", (APPEND_LOCK,)).fetchone()
            assert free == (False,)
        assert probe.execute("SELECT pg_try_advisory_lock(%s)", (APPEND_LOCK,)).fetchone() == (
            True,
        )
    store.close()


@pytest.mark.timeout(10)
def test_an_unreachable_database_is_store_unavailable_naming_the_endpoint_not_the_password() -> (
    None
):
    port = free_port()
    with pytest.raises(StoreError) as info:
        open_store(f"postgresql://postgres:s3cret-pw@127.0.0.1:{port}/nothing")
    assert info.value.code == "store_unavailable"
    assert f"PostgreSQL at 127.0.0.1:{port}/nothing" in info.value.detail
    assert "s3cret-pw" not in str(info.value.to_problem())


@pytest.mark.timeout(60)
def test_eight_repositories_written_at_once_through_a_pool_of_two_all_commit(
    postgres_server: PostgresServer,
) -> None:
    """Each write reads the store clock while it holds a connection and the append lock:
    the clock is read on the transaction's own connection, so no write waits for a
    second one (with the clock on a second pooled connection, two writers deadlock)."""
    store = PostgresStore(postgres_server.new_database(), pool_size=2)
    repos = [f"r{i}" for i in range(8)]
    service = Service(store, StoreClock(store), [RepoConfig(r) for r in repos])
    opened: list[str] = []
    failed: list[BaseException] = []
    start = threading.Barrier(len(repos))

    def write(repo: str) -> None:
        start.wait(timeout=30)
        try:
            for n in range(3):
                opened.append(service.claims.open_claim(seed(f"f{n}.py", repo=repo)).claim.id)
        except BaseException as exc:  # reported below
            failed.append(exc)

    threads = [threading.Thread(target=write, args=(r,)) for r in repos]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=45)
    assert not any(t.is_alive() for t in threads), "writers are stuck"
    assert failed == [] and len(opened) == 3 * len(repos)
    assert service.audit().ok
    store.close()


def test_a_store_url_is_printed_without_its_password() -> None:
    assert display_url("postgresql://app:s3cret@db:5432/x") == "postgresql://app:***@db:5432/x"
    assert display_url("postgresql://app@db/x") == "postgresql://app@db/x"
    assert display_url("etcd://a:1,b:2/team") == "etcd://a:1,b:2/team"
    assert display_url("sqlite:////srv/detente.db") == "sqlite:////srv/detente.db"


def test_the_write_call_carries_every_field_of_a_lease_row_and_the_revision_it_extends() -> None:
    row = LeaseRow(
        "clm_1", "demo", "lse_1", 4, 60, "2026-01-01T00:01:00Z", "2026-01-01T00:00:00Z", 7
    )
    params = write_params(1, 0, {}, [], [], "ch", 6, [(row, 3)])
    [sent] = rowjson.loads(params[-1])
    assert sent == {**dataclasses.asdict(row), "base": 3}


def test_payloads_with_quotes_backslashes_newlines_and_non_ascii_text_read_back_unchanged(
    postgres_server: PostgresServer,
) -> None:
    awkward = {
        "objective": 'say "hi" \\ then\nnewline\ttab {braces} [brackets] ,comma',
        "path": "ü/日本/\u2028x",
        "nested": {"list": ['"', "\\", "", None, True, 7]},
    }
    store = open_store(postgres_server.new_database())
    with store.transaction("demo") as tx:
        stored = tx.append(
            [
                NewEvent("e1", "claim.announced", 1, "demo", "claim/c", awkward, "t"),
                NewEvent("e2", "claim.renewed", 1, "demo", "claim/c", {"n": 1}, "t"),
            ],
            {"claim/c": 0},
        )
        tx.upsert_records([RecordRow("claim", "c", "demo", 2, 'act"ive', awkward)])
    events = store.read(since=0)
    assert [e.data for e in events] == [awkward, {"n": 1}]
    assert events == stored
    [row] = store.records("claim")
    assert (row.id, row.revision, row.status, row.body) == ("c", 2, 'act"ive', awkward)
    assert store.head() == (2, stored[-1].hash)
    store.close()
