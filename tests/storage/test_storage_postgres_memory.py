"""A PostgreSQL transaction starts from the head and clock its store's own last commit
left (one round trip), and a stale memory never costs correctness."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import RenewLease
from detente.errors import ConcurrencyError
from detente.eventlog.envelope import GENESIS_HASH, verify_link
from detente.service import RepoConfig, Service
from detente.storage.base import NewEvent, RecordRow
from detente.storage.etcd_head import Head
from detente.storage.factory import open_store
from detente.storage.postgres import APPEND_LOCK, PostgresStore
from detente.storage.postgres_memory import PgMemory
from storage.servers import PostgresServer

from support import seed


def _event(n: int, subject: str = "claim/c") -> NewEvent:
    return NewEvent(f"e{subject}{n}", "claim.announced", 1, "demo", subject, {"n": n}, "t")


@pytest.fixture
def two_servers(postgres_server: PostgresServer) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    url = postgres_server.new_database()
    a, b = open_store(url), open_store(url)
    assert isinstance(a, PostgresStore) and isinstance(b, PostgresStore)
    yield a, b
    a.close()
    b.close()


class _Monotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_clock_reading_is_carried_forward_by_the_monotonic_clock_until_it_is_stale() -> None:
    ticks = _Monotonic()
    memory = PgMemory(ticks, fresh=2.0)
    read = datetime(2026, 1, 1, tzinfo=UTC)
    assert memory.clock() is None
    memory.saw_clock(read)
    ticks.now += 1.5
    assert memory.clock() == read + timedelta(seconds=1.5)
    ticks.now += 1.0  # 2.5 s after the reading
    assert memory.clock() is None


def test_a_start_from_memory_needs_both_a_head_and_a_fresh_clock_reading() -> None:
    ticks = _Monotonic()
    memory = PgMemory(ticks, fresh=2.0)
    memory.heads.keep(Head(3, "h3", 0, 0, at="t3"))
    assert memory.take() is None  # no clock reading: read both under the lock
    memory.saw_clock(datetime(2026, 1, 1, tzinfo=UTC))
    memory.heads.keep(Head(3, "h3", 0, 0, at="t3"))
    start = memory.take()
    assert start is not None and (start.head.seq, start.head.at) == (3, "t3")
    assert start.head.remembered
    assert memory.take() is None  # taken: the next transaction reads unless kept again


def test_a_head_older_than_one_already_kept_is_not_remembered() -> None:
    memory = PgMemory(_Monotonic())
    memory.saw_clock(datetime(2026, 1, 1, tzinfo=UTC))
    memory.keep(Head(6, "h6", 0, 0))
    memory.keep(Head(5, "h5", 0, 0))  # a transaction that ended later, committed earlier
    start = memory.take()
    assert start is not None and start.head.seq == 6


def test_a_single_writer_starts_every_transaction_after_its_first_from_memory(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    a, _ = two_servers
    for n in range(5):
        with a.transaction("demo") as tx:
            tx.append([_event(n)], {"claim/c": n})
    assert (a.memory.heads.hits, a.memory.heads.misses) == (4, 0)
    assert [e.subject_revision for e in a.read()] == [1, 2, 3, 4, 5]


def test_a_transaction_from_memory_does_not_hold_the_append_lock_while_it_decides(
    two_servers: tuple[PostgresStore, PostgresStore], postgres_server: PostgresServer
) -> None:
    a, _ = two_servers
    with a.transaction("demo") as tx:
        tx.append([_event(0)], {"claim/c": 0})
    with psycopg.connect(a.url, autocommit=True) as probe, a.transaction("demo") as tx:
        free = probe.execute("SELECT pg_try_advisory_lock(%s)", (APPEND_LOCK,)).fetchone()
        assert free == (True,)  # the lock is taken by the commit call alone
        probe.execute("SELECT pg_advisory_unlock(%s)", (APPEND_LOCK,))
        tx.append([_event(1)], {"claim/c": 1})
    assert a.memory.heads.hits == 1
    assert [e.subject_revision for e in a.read()] == [1, 2]


def test_a_commit_from_memory_after_another_server_appended_loses_and_the_next_one_commits(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = two_servers
    with a.transaction("demo") as tx:
        tx.append([_event(0)], {"claim/c": 0})
    with b.transaction("demo") as tx:  # b read the head: it follows a's event
        tx.append([_event(0, "claim/d")], {"claim/d": 0})
    moved = pytest.raises(ConcurrencyError, match="another server appended first")
    with moved, a.transaction("demo") as tx:
        tx.append([_event(1)], {"claim/c": 1})  # sealed after a's own head: seq 2 is b's
    assert a.memory.heads.misses == 1
    with a.transaction("demo") as tx:  # reads the head now
        assert tx.read_after(1, "demo")[0].subject == "claim/d"
        tx.append([_event(1)], {"claim/c": 1})
    prev, subjects = GENESIS_HASH, []
    for i, e in enumerate(a.read(), start=1):
        assert verify_link(e, prev, i) is None
        prev, subjects = e.hash, [*subjects, e.subject]
    assert subjects == ["claim/c", "claim/d", "claim/c"]


def test_a_rows_only_commit_from_memory_after_another_server_appended_loses(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = two_servers
    with a.transaction("demo") as tx:
        tx.append([_event(0)], {"claim/c": 0})
    with b.transaction("demo") as tx:
        tx.append([_event(0, "claim/d")], {"claim/d": 0})
    row = RecordRow("claim", "c", "demo", 1, "active", {"stale": True})
    with pytest.raises(ConcurrencyError), a.transaction("demo") as tx:
        tx.upsert_records([row])  # no event: the head check alone refuses it
    assert a.records("claim") == []


def test_a_write_less_transaction_from_memory_fails_when_another_server_moved_the_head(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = two_servers
    with a.transaction("demo") as tx:
        tx.append([_event(0)], {"claim/c": 0})
    with a.transaction("demo"):  # nothing moved: nothing to object to
        pass
    with b.transaction("demo") as tx:
        tx.append([_event(0, "claim/d")], {"claim/d": 0})
    with pytest.raises(ConcurrencyError), a.transaction("demo"):
        pass  # what it decided (say, a refusal) was decided on a log that had moved


def test_a_stale_expected_revision_from_memory_is_refused_and_writes_nothing(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    a, _ = two_servers
    with a.transaction("demo") as tx:
        tx.append([_event(0)], {"claim/c": 0})
    stale = pytest.raises(ConcurrencyError, match="stream claim/c is at revision 1, expected 3")
    with stale, a.transaction("demo") as tx:
        tx.append([_event(1)], {"claim/c": 3})
    assert [e.subject_revision for e in a.read()] == [1]


def test_the_commit_reads_one_index_entry_per_stream_whatever_the_stream_length(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    """The base-revision check must not read a stream's earlier events: a renewal would
    cost more with every renewal before it."""
    a, _ = two_servers
    for n in range(60):
        with a.transaction("demo") as tx:
            tx.append([_event(n)], {"claim/c": n})
    with psycopg.connect(a.url, autocommit=True) as conn, conn.transaction():
        conn.execute(
            "SELECT detente_commit(%s, 60, '{\"claim/c\": 60}'::json, "
            "'[]'::json, '[]'::json, 'x', NULL, 0, '[]'::json)",
            (APPEND_LOCK,),
        )
        [(seq_read, fetched)] = conn.execute(
            "SELECT seq_tup_read, idx_tup_fetch FROM pg_stat_xact_user_tables "
            "WHERE relname = 'events'"
        ).fetchall()
    assert seq_read == 0
    assert fetched <= 3  # the head and the stream's last revision


def test_a_renewal_sent_to_a_server_whose_remembered_head_is_stale_is_renewed_not_refused(
    postgres_server: PostgresServer, clock: FakeClock
) -> None:
    """A client renews on one server, then on another that last committed before it: the
    second server's projection lags, and its refusal would be wrong; the write-less
    transaction's head check sends the batch round again on the current log."""
    url = postgres_server.new_database()
    one = Service(open_store(url), clock, [RepoConfig("demo")])
    two = Service(open_store(url), clock, [RepoConfig("demo")])
    claim = one.claims.open_claim(seed("src/**")).claim
    for server in (two, one, two, one):  # each one's memory is stale when its turn comes
        clock.advance(1)
        renewed = server.claims.renew(
            RenewLease(claim.id, claim.lease.revision, claim.revision, 60)
        ).claim
        assert renewed.lease.revision == claim.lease.revision + 1
        claim = renewed
    assert isinstance(one.store, PostgresStore) and one.store.memory.heads.misses >= 1
    assert one.audit().ok
    one.store.close()
    two.store.close()
