"""SQLite reads run on WAL reader connections: they never queue behind a write."""

from __future__ import annotations

import threading
from pathlib import Path

from detente.eventlog.envelope import NewEvent
from detente.storage.sqlite import SqliteStore

WAIT = 15.0


def _event(n: int) -> NewEvent:
    return NewEvent(
        id=f"evt_{n}",
        type="test.happened",
        version=1,
        repo="demo",
        subject="test/1",
        data={"n": n},
        at="2026-01-01T00:00:00Z",
    )


def test_a_read_answers_while_a_write_transaction_is_open_and_sees_only_commits(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "d.db")
    with store.transaction("demo") as tx:
        tx.append([_event(1)], {"test/1": 0})
    inside = threading.Event()
    release = threading.Event()

    def slow_writer() -> None:
        with store.transaction("demo") as tx:
            tx.append([_event(2)], {"test/1": 1})
            inside.set()
            assert release.wait(WAIT)

    writer = threading.Thread(target=slow_writer)
    writer.start()
    try:
        assert inside.wait(WAIT)
        heads: list[int] = []
        reader = threading.Thread(target=lambda: heads.append(store.head()[0]))
        reader.start()
        reader.join(timeout=WAIT)
        assert not reader.is_alive(), "a read waited for the open write transaction"
        assert heads == [1]  # the uncommitted event is invisible
    finally:
        release.set()
        writer.join(timeout=WAIT)
    assert store.head()[0] == 2
    assert [e.data["n"] for e in store.read(since=0)] == [1, 2]
    store.close()
