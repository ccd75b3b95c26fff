"""A PostgreSQL transaction starts from the head and clock its store's own last commit
left (one round trip), and a stale memory never costs correctness."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import RenewLease, SetStatus
from detente.domain.claims.model import Claim, ClaimStatus
from detente.errors import ConcurrencyError, DetenteError
from detente.eventlog.envelope import GENESIS_HASH, verify_link
from detente.service import RepoConfig, Service
from detente.storage.base import LeaseRow, NewEvent, RecordRow
from detente.storage.etcd_head import Head
from detente.storage.factory import open_store
from detente.storage.postgres import APPEND_LOCK, PostgresStore
from detente.storage.postgres_memory import PgMemory
from detente.storage.postgres_tx import PgTx
from storage.live import wait_until
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


def _lease(revision: int, claim: str = "c", deadline: str = "2026-01-01T00:01:00Z") -> LeaseRow:
    return LeaseRow(claim, "demo", "lse_" + claim, revision, 60, deadline, "2026-01-01T00:00:00Z")


def _renew(store: PostgresStore, *rows: LeaseRow) -> bool:
    """Move lease rows in one transaction (a batch of renewals); True when it found other
    writers' rows unseen."""
    with store.transaction_for("demo", appends=False) as tx:
        tx.write_leases(rows)
    assert isinstance(tx, PgTx)
    return tx.unseen_leases


def test_a_renewal_from_memory_commits_after_another_server_moved_other_leases(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    """Heartbeats on two servers do not make each other lose their compare: only the log
    head and the renewed claim's own lease revision are compared; the stamps stay in
    commit order."""
    a, b = two_servers
    assert _renew(a, _lease(1)) is False  # a's first transaction: locked, reads both heads
    assert _renew(b, _lease(1, claim="d")) is False
    assert _renew(b, _lease(2, claim="d")) is False
    assert _renew(a, _lease(2)) is True  # from memory; b's row lies below a's own
    assert (a.memory.heads.hits, a.memory.heads.misses) == (1, 0)
    rows = a.leases_after(0, "demo")
    assert [(r.claim_id, r.revision) for r in rows] == [("d", 2), ("c", 2)]
    assert rows[0].stamp < rows[1].stamp
    # a remembers the head its write left, and still counts b's row as unseen
    assert _renew(a, _lease(3)) is True
    assert (a.memory.heads.hits, a.memory.heads.misses) == (2, 0)
    assert [r.stamp for r in a.leases_after(0, "demo")] == [rows[0].stamp, rows[1].stamp + 1]


def test_once_another_writer_is_known_a_batch_that_appends_starts_under_the_lock(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    """Decided from memory, an append would nearly always lose to the other server's
    heartbeats (and cost its projection); renewals still start from memory."""
    a, b = two_servers
    with a.transaction("demo") as tx:
        tx.append([_event(0)], {"claim/c": 0})
    with a.transaction("demo") as tx:
        tx.append([_event(1)], {"claim/c": 1})
    assert (a.memory.heads.hits, a.memory.contended) == (1, False)  # alone: from memory
    _renew(b, _lease(1, claim="d"))
    assert _renew(a, _lease(1)) is True
    assert (a.memory.heads.hits, a.memory.contended) == (2, True)
    _renew(b, _lease(2, claim="d"))
    with a.transaction("demo") as tx:  # locked: it reads both heads, b's row is above a's
        assert [r.revision for r in tx.leases_after(0, "demo") if r.claim_id == "d"] == [2]
        tx.append([_event(2)], {"claim/c": 2})
    assert (a.memory.heads.hits, a.memory.heads.misses) == (2, 0)
    _renew(a, _lease(2))  # and the renewal after it from memory again
    assert (a.memory.heads.hits, a.memory.heads.misses) == (3, 0)


def test_a_start_from_memory_is_declined_once_a_later_commit_was_heard() -> None:
    memory = PgMemory(_Monotonic())
    memory.saw_clock(datetime(2026, 1, 1, tzinfo=UTC))
    memory.keep(Head(5, "h5", 0, 0))
    memory.heard(5)  # its own commit's notification
    assert memory.take() is not None
    memory.keep(Head(6, "h6", 0, 0))
    memory.heard(7)  # another server appended event 7
    assert memory.take() is None
    assert memory.declined == 1


def test_a_renewal_from_memory_still_loses_to_a_move_of_its_own_lease(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = two_servers
    _renew(a, _lease(1))
    _renew(b, _lease(2))  # b renewed c first
    with pytest.raises(ConcurrencyError, match="lease of claim c is at revision 2, expected 1"):
        _renew(a, _lease(2, deadline="2026-01-01T00:09:00Z"))
    [row] = a.leases_after(0, "demo")
    assert (row.revision, row.expires_at) == (2, "2026-01-01T00:01:00Z")


def test_a_renewal_from_memory_still_loses_when_another_server_appended(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    a, b = two_servers
    _renew(a, _lease(1))
    with b.transaction("demo") as tx:  # say, b ended claim c
        tx.append([_event(0)], {"claim/c": 0})
    with pytest.raises(ConcurrencyError, match="another server appended first"):
        _renew(a, _lease(2))
    assert [r.revision for r in a.leases_after(0, "demo")] == [1]


def test_an_append_from_memory_still_loses_when_another_server_moved_a_lease(
    two_servers: tuple[PostgresStore, PostgresStore],
) -> None:
    """An expiry, a checkpoint or an overlap decision is never made on lease rows its
    server has not seen."""
    a, b = two_servers
    with a.transaction("demo") as tx:
        tx.append([_event(0)], {"claim/c": 0})
    _renew(b, _lease(1, claim="d"))
    moved = pytest.raises(ConcurrencyError, match="another server moved a lease first")
    with moved, a.transaction_for("demo", appends=False) as tx:
        tx.append([_event(1)], {"claim/c": 1})
    assert [e.subject_revision for e in a.read()] == [1]


def test_renewals_on_two_servers_commit_from_memory_and_a_stale_server_refuses_an_ended_claim(
    postgres_server: PostgresServer, clock: FakeClock
) -> None:
    """Each server renews its own agents' claims without losing to the other's; a
    server that has not read the claim's end still refuses to renew it."""
    url = postgres_server.new_database()
    one = Service(open_store(url), clock, [RepoConfig("demo")])
    two = Service(open_store(url), clock, [RepoConfig("demo")])
    mine = one.claims.open_claim(seed("src/**")).claim
    theirs = one.claims.open_claim(seed("docs/**")).claim
    two.claims.get_claim(theirs.id)  # two has read both
    for _ in range(3):
        clock.advance(1)
        for server, claim_id in ((one, mine.id), (two, theirs.id)):
            held = server.claims.get_claim(claim_id).claim
            renewed = server.claims.renew(
                RenewLease(claim_id, held.lease.revision, held.revision, 60)
            ).claim
            assert renewed.lease.revision == held.lease.revision + 1
    assert isinstance(two.store, PostgresStore)
    assert two.store.memory.heads.misses == 0  # never lost to one's heartbeats
    held = two.claims.get_claim(theirs.id).claim
    one.claims.set_status(SetStatus(theirs.id, held.revision, ClaimStatus.ABANDONED))
    with pytest.raises(DetenteError) as refused:
        two.claims.renew(RenewLease(theirs.id, held.lease.revision, held.revision, 60))
    assert refused.value.code in {"lease_expired", "revision_conflict"}
    assert one.claims.get_claim(theirs.id).claim.status is ClaimStatus.ABANDONED
    assert one.audit().ok
    one.store.close()
    two.store.close()


def test_a_server_that_has_not_read_another_servers_heartbeats_never_expires_their_leases(
    postgres_server: PostgresServer, clock: FakeClock
) -> None:
    """Renewal batches from memory do not read other servers' lease rows; an expiry one of
    them decides on that stale view must not commit: it runs again on the locked path,
    which reads the rows and finds the lease renewed."""
    url = postgres_server.new_database()
    one = Service(open_store(url), clock, [RepoConfig("demo")])
    two = Service(open_store(url), clock, [RepoConfig("demo")])

    held: dict[str, Claim] = {}

    def renew(server: Service, claim_id: str) -> int:  # as an agent does: no read first
        claim = held[claim_id]
        cmd = RenewLease(claim_id, claim.lease.revision, claim.revision, claim.lease.ttl_seconds)
        held[claim_id] = server.claims.renew(cmd).claim
        return held[claim_id].lease.revision

    theirs = one.claims.open_claim(seed("src/**", ttl=60)).claim  # deadline 60
    mine = two.claims.open_claim(seed("docs/**", agent="bob", ttl=600)).claim
    held.update({theirs.id: theirs, mine.id: mine})
    for _ in range(2):
        clock.advance(1)
        renew(one, theirs.id)
        renew(two, mine.id)
    assert isinstance(two.store, PostgresStore) and two.store.memory.contended
    clock.advance(48)
    renewed = renew(one, theirs.id)  # at 50: deadline 110, a row two has not read
    clock.advance(1)
    renew(two, mine.id)  # two's memory now holds a lease head above one's row
    clock.advance(19)  # 70: past the deadline two last read (62), before the real one
    renew(two, mine.id)
    assert [e.type for e in one.store.read() if e.type == "claim.expired"] == []
    claim = one.claims.get_claim(theirs.id).claim
    assert (claim.status, claim.lease.revision) == (ClaimStatus.ACTIVE, renewed)
    assert one.audit().ok
    one.store.close()
    two.store.close()


def test_a_server_folds_every_heartbeat_of_another_however_its_own_renewals_interleave(
    postgres_server: PostgresServer, clock: FakeClock
) -> None:
    """Rows a renewal batch from memory did not read stay below what the projection
    claims to have folded, so the next read finds them (a lost row would leave the
    server's view of that lease behind for good)."""
    url = postgres_server.new_database()
    one = Service(open_store(url), clock, [RepoConfig("demo")])
    two = Service(open_store(url), clock, [RepoConfig("demo")])
    theirs = one.claims.open_claim(seed("src/**")).claim
    mine = two.claims.open_claim(seed("docs/**", agent="bob")).claim
    for _ in range(3):  # one heartbeat of one's between each two of two's
        clock.advance(1)
        theirs = one.claims.renew(
            RenewLease(theirs.id, theirs.lease.revision, theirs.revision, 60)
        ).claim
        for _ in range(2):
            mine = two.claims.renew(
                RenewLease(mine.id, mine.lease.revision, mine.revision, 60)
            ).claim
    assert isinstance(two.store, PostgresStore) and two.store.memory.contended
    seen = two.claims.get_claim(theirs.id).claim.lease
    assert (seen.revision, seen.expires_at) == (theirs.lease.revision, theirs.lease.expires_at)
    one.store.close()
    two.store.close()


def test_a_renewal_refused_on_a_view_without_another_servers_heartbeats_is_decided_again(
    postgres_server: PostgresServer, clock: FakeClock
) -> None:
    """An agent renews through a server what it last renewed through another, in one
    batch with that server's own agents' renewals: decided on a view that lacks the other
    server's row it would be refused (a stale lease revision); the batch runs again on
    the locked path, which reads the row, and both are renewed."""
    url = postgres_server.new_database()
    one = Service(open_store(url), clock, [RepoConfig("demo")])
    two = Service(open_store(url), clock, [RepoConfig("demo")])

    def cmd(claim: Claim) -> RenewLease:
        return RenewLease(claim.id, claim.lease.revision, claim.revision, 60)

    theirs = one.claims.open_claim(seed("src/**")).claim
    mine = two.claims.open_claim(seed("docs/**", agent="bob")).claim
    for _ in range(2):
        clock.advance(1)
        theirs = one.claims.renew(cmd(theirs)).claim
        mine = two.claims.renew(cmd(mine)).claim
    assert isinstance(two.store, PostgresStore) and two.store.memory.contended
    clock.advance(1)
    theirs = one.claims.renew(cmd(theirs)).claim  # a row two has not read
    answers: list[Any] = [None, None]

    def renew_on_two(i: int, claim: Claim) -> None:
        try:
            answers[i] = two.claims.renew(cmd(claim)).claim
        except Exception as exc:
            answers[i] = exc

    threads = [
        threading.Thread(target=renew_on_two, args=(i, c)) for i, c in enumerate((mine, theirs))
    ]
    with two.lock("demo"):  # both queue, then one batch takes them
        for n, t in enumerate(threads, start=1):
            t.start()
            wait_until(lambda n=n: two.group_commit.queued("demo") == n, 10, f"call {n} queues")
    for t in threads:
        t.join(timeout=30)
    assert [(a.id, a.lease.revision) for a in answers] == [
        (mine.id, mine.lease.revision + 1),
        (theirs.id, theirs.lease.revision + 1),
    ]
    one.store.close()
    two.store.close()
