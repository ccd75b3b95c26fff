"""The storage contract, run against every backend (``store`` fixture: memory, SQLite,
PostgreSQL, etcd)."""

from __future__ import annotations

import pytest

from detente.errors import ConcurrencyError
from detente.eventlog.envelope import GENESIS_HASH, verify_link
from detente.storage.base import NewEvent, RecordRow, Store


def _event(i: int, subject: str = "claim/c1", repo: str = "demo") -> NewEvent:
    return NewEvent(
        f"evt_{i}", "claim.announced", 1, repo, subject, {"n": i}, "2026-01-01T00:00:00.000000Z"
    )


def test_an_empty_store_has_head_zero_and_the_genesis_hash(store: Store) -> None:
    assert store.head() == (0, GENESIS_HASH)
    assert store.read() == []


def test_appends_get_consecutive_sequences_chained_by_hash(store: Store) -> None:
    with store.transaction("demo") as tx:
        tx.append([_event(1), _event(2)], {"claim/c1": 0})
    with store.transaction("demo") as tx:
        tx.append([_event(3, "claim/c2")], {"claim/c2": 0})
    events = store.read()
    assert [e.seq for e in events] == [1, 2, 3]
    assert [e.subject_revision for e in events] == [1, 2, 1]
    prev = GENESIS_HASH
    for e in events:
        assert verify_link(e, prev, e.seq) is None
        prev = e.hash
    assert store.head() == (3, events[-1].hash)


def test_a_stale_expected_revision_appends_nothing(store: Store) -> None:
    with store.transaction("demo") as tx:
        tx.append([_event(1)], {"claim/c1": 0})
    with pytest.raises(ConcurrencyError), store.transaction("demo") as tx:
        tx.append([_event(2)], {"claim/c1": 0})
    assert [e.id for e in store.read()] == ["evt_1"]


def test_an_error_inside_a_transaction_rolls_back_events_and_rows(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction("demo") as tx:
        tx.append([_event(1)], {"claim/c1": 0})
        tx.upsert_records([RecordRow("claim", "c1", "demo", 1, "active", {"id": "c1"})])
        raise RuntimeError("boom")
    assert store.read() == [] and store.records("claim") == []
    assert store.head() == (0, GENESIS_HASH)


def test_projection_rows_are_replaced_and_filtered_by_kind_and_repo(store: Store) -> None:
    with store.transaction("demo") as tx:
        tx.upsert_records([RecordRow("claim", "c1", "demo", 1, "active", {"v": 1})])
        tx.upsert_records([RecordRow("claim", "c1", "demo", 2, "expired", {"v": 2})])
        tx.upsert_records([RecordRow("meeting", "m1", "other", 1, "open", {})])
    [row] = store.records("claim")
    assert (row.revision, row.status, row.body) == (2, "expired", {"v": 2})
    assert store.records("meeting", repo="demo") == []


def test_reads_filter_by_repo_and_page_by_since(store: Store) -> None:
    with store.transaction("demo") as tx:
        tx.append(
            [_event(1, "claim/a"), _event(2, "claim/b", repo="other"), _event(3, "claim/c")],
            {"claim/a": 0, "claim/b": 0, "claim/c": 0},
        )
    assert [e.seq for e in store.read(repo="demo")] == [1, 3]
    assert [e.seq for e in store.read(since=1, limit=1)] == [2]
    assert [e.seq for e in store.iter_all(batch=1)] == [1, 2, 3]
    with store.transaction("demo") as tx:
        assert [e.seq for e in tx.read_after(1, "demo")] == [3]


def test_two_appends_in_one_transaction_continue_the_sequence_and_stream_revisions(
    store: Store,
) -> None:
    with store.transaction("demo") as tx:
        first = tx.append([_event(1), _event(2, "claim/c2")], {"claim/c1": 0, "claim/c2": 0})
        second = tx.append([_event(3)], {"claim/c1": 1})
    assert [e.seq for e in first + second] == [1, 2, 3]
    assert second[0].prev_hash == first[-1].hash and second[0].subject_revision == 2
    assert store.head() == (3, second[0].hash)


def test_an_expected_revision_ahead_of_the_stream_is_refused(store: Store) -> None:
    with pytest.raises(ConcurrencyError), store.transaction("demo") as tx:
        tx.append([_event(1)], {"claim/c1": 3})
    assert store.head() == (0, GENESIS_HASH)


def test_unicode_and_nested_payloads_round_trip_with_a_verifiable_hash(store: Store) -> None:
    data = {"paths": ["src/ünï/**", "日本.md"], "nested": {"n": [1, {"ok": True, "x": None}]}}
    with store.transaction("demo") as tx:
        [written] = tx.append(
            [NewEvent("e1", "claim.announced", 1, "demo", "claim/c", data, "t")], {"claim/c": 0}
        )
    [read] = store.read()
    assert read == written and read.data == data
    assert verify_link(read, GENESIS_HASH, 1) is None


def test_reads_past_the_head_or_with_limit_zero_are_empty_and_unknown_kinds_have_no_rows(
    store: Store,
) -> None:
    with store.transaction("demo") as tx:
        tx.append([_event(1)], {"claim/c1": 0})
        tx.upsert_records(
            [RecordRow("claim", i, "demo", 1, "active", {"id": i}) for i in ("b", "c", "a")]
        )
    assert store.read(since=1) == [] and store.read(limit=0) == []
    assert sorted(r.id for r in store.records("claim")) == ["a", "b", "c"]
    assert store.records("nothing") == []
