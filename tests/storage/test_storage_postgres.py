"""PostgreSQL-specific guarantees: append-only at the storage level, clear failures."""

from __future__ import annotations

import psycopg
import pytest

from detente.errors import StoreError
from detente.storage.base import NewEvent
from detente.storage.factory import open_store
from detente.storage.postgres import APPEND_LOCK
from storage.servers import PostgresServer, free_port


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


def test_an_unreachable_database_is_store_unavailable() -> None:
    with pytest.raises(StoreError) as info:
        open_store(f"postgresql://postgres@127.0.0.1:{free_port()}/nothing")
    assert info.value.code == "store_unavailable"
