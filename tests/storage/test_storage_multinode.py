"""Several store handles (as several servers have) on one PostgreSQL database or etcd cluster."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from detente.clock import parse_time
from detente.errors import ConcurrencyError
from detente.eventlog.envelope import GENESIS_HASH, verify_link
from detente.storage.base import NewEvent, NotifyingStore, Store, TimedStore
from detente.storage.factory import open_store
from storage.servers import EtcdCluster, PostgresServer


def _event(i: int, subject: str, repo: str = "demo") -> NewEvent:
    return NewEvent(f"evt_{subject}_{i}", "claim.announced", 1, repo, subject, {"n": i}, "t")


@pytest.fixture(params=["postgres", "etcd"])
def two_handles(request: pytest.FixtureRequest) -> Iterator[tuple[Store, Store]]:
    """Two independent handles on one fresh store, as two servers would open it."""
    if request.param == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        url = server.new_database()
    else:
        cluster: EtcdCluster = request.getfixturevalue("etcd_cluster")
        url = cluster.url()
    a, b = open_store(url), open_store(url)
    yield a, b
    a.close()
    b.close()


def _assert_one_chain(store: Store) -> list[int]:
    prev, seqs = GENESIS_HASH, []
    for e in store.iter_all(batch=7):
        assert verify_link(e, prev, len(seqs) + 1) is None
        prev = e.hash
        seqs.append(e.seq)
    return seqs


def test_two_handles_racing_on_one_stream_commit_exactly_one_append_per_revision(
    two_handles: tuple[Store, Store],
) -> None:
    rounds, wins, lock = 30, [0, 0], threading.Lock()

    def writer(i: int, store: Store, barrier: threading.Barrier) -> None:
        for n in range(rounds):
            barrier.wait(timeout=30)
            try:
                with store.transaction("demo") as tx:
                    tx.append([_event(n * 2 + i, "claim/hot")], {"claim/hot": n})
                with lock:
                    wins[i] += 1
            except ConcurrencyError:
                pass
            barrier.wait(timeout=30)

    barrier = threading.Barrier(2)
    threads = [
        threading.Thread(target=writer, args=(i, s, barrier)) for i, s in enumerate(two_handles)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sum(wins) == rounds
    events = two_handles[1].read(limit=1000)
    assert [e.subject_revision for e in events] == list(range(1, rounds + 1))
    assert _assert_one_chain(two_handles[0]) == list(range(1, rounds + 1))


def test_a_reader_following_the_log_sees_every_concurrent_commit_once_in_order(
    two_handles: tuple[Store, Store],
) -> None:
    a, b = two_handles
    per_writer, writers = 25, 4
    done = threading.Event()

    def write(w: int) -> None:
        store = a if w % 2 else b
        for n in range(per_writer):
            while True:
                try:
                    with store.transaction(f"repo{w}") as tx:
                        tx.append([_event(n, f"claim/w{w}", repo=f"repo{w}")], {f"claim/w{w}": n})
                    break
                except ConcurrencyError:
                    continue

    seen: list[int] = []

    def follow() -> None:
        position, deadline = 0, time.monotonic() + 120
        while len(seen) < per_writer * writers and time.monotonic() < deadline:
            batch = a.read(since=position, limit=3)
            seen.extend(e.seq for e in batch)
            position = batch[-1].seq if batch else position
            if not batch and done.is_set() and a.head()[0] == position:
                return

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    reader = threading.Thread(target=follow)
    reader.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    done.set()
    reader.join(timeout=60)
    assert seen == list(range(1, per_writer * writers + 1))
    assert _assert_one_chain(b) == seen


def test_a_commit_through_one_handle_wakes_listeners_of_the_other(
    two_handles: tuple[Store, Store],
) -> None:
    a, b = two_handles
    assert isinstance(b, NotifyingStore)
    woke: list[int] = []
    reached = threading.Event()

    def on_commit(seq: int) -> None:
        woke.append(seq)
        if seq >= 1:
            reached.set()

    unlisten = b.listen(on_commit)
    try:
        # The listener may attach after a first commit: commit until one is heard.
        for n in range(50):
            with a.transaction("demo") as tx:
                tx.append([_event(n, "claim/c")], {"claim/c": n})
            if reached.wait(timeout=0.5):
                break
        assert reached.is_set() and max(woke) >= 1
    finally:
        unlisten()


def test_the_store_clock_is_utc_and_never_behind_a_commit_seen_in_a_transaction(
    two_handles: tuple[Store, Store],
) -> None:
    a, b = two_handles
    assert isinstance(a, TimedStore) and isinstance(b, TimedStore)
    before = datetime.now(UTC)
    readings = [a.now(), b.now(), a.now()]
    after = datetime.now(UTC)
    for when in readings:
        assert when.tzinfo is not None and when.utcoffset() == timedelta(0)
        assert before - timedelta(seconds=5) <= when <= after + timedelta(seconds=5)
    # A commit recorded by a server whose clock runs an hour ahead: inside a transaction
    # no etcd server's "now" falls behind it (etcd floors its time by the last commit).
    # PostgreSQL's clock is the database's own (the multi-server tests show it ignores
    # the machine's clock).
    ahead = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    with a.transaction("demo") as tx:
        tx.append(
            [NewEvent("e_ahead", "claim.announced", 1, "demo", "claim/x", {}, ahead)],
            {"claim/x": 0},
        )
    with b.transaction("demo"):
        assert b.now() >= parse_time(ahead) or "etcd" not in a.url
    assert a.now() >= readings[-1] - timedelta(seconds=5)


def test_projection_rows_written_through_one_handle_are_read_through_the_other(
    two_handles: tuple[Store, Store],
) -> None:
    from detente.storage.base import RecordRow

    a, b = two_handles
    with a.transaction("demo") as tx:
        tx.append([_event(1, "claim/c1")], {"claim/c1": 0})
        tx.upsert_records([RecordRow("claim", "c1", "demo", 1, "active", {"paths": ["ü/x"]})])
    [row] = b.records("claim", repo="demo")
    assert (row.id, row.revision, row.body) == ("c1", 1, {"paths": ["ü/x"]})
    assert b.records("claim", repo="other") == [] and b.head() == a.head()
