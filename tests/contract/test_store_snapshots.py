"""Projection snapshots, on every backend that keeps them (``store`` fixture: memory,
SQLite, PostgreSQL, etcd)."""

from __future__ import annotations

import hashlib
import os

from detente.eventlog.snapshots import Snapshot
from detente.storage.base import SnapshotStore, Store


def _snapshot(
    seq: int, body: bytes = b"state", repo: str = "demo", version: str = "1-test"
) -> Snapshot:
    digest = hashlib.sha256(body).hexdigest()
    return Snapshot(repo, seq, f"{seq:064x}", version, digest, body)


def test_every_store_keeps_snapshots(store: Store) -> None:
    assert isinstance(store, SnapshotStore)


def test_a_saved_snapshot_loads_back_unchanged_and_per_repository(store: Store) -> None:
    assert isinstance(store, SnapshotStore)
    assert store.load_snapshot("demo") is None
    store.save_snapshot(_snapshot(3))
    store.save_snapshot(_snapshot(5, b"other", repo="other"))
    assert store.load_snapshot("demo") == _snapshot(3)
    assert store.load_snapshot("other") == _snapshot(5, b"other", repo="other")


def test_a_newer_snapshot_replaces_an_older_one_and_never_the_reverse(store: Store) -> None:
    assert isinstance(store, SnapshotStore)
    store.save_snapshot(_snapshot(7, b"seven"))
    store.save_snapshot(_snapshot(4, b"four"))
    assert store.load_snapshot("demo") == _snapshot(7, b"seven")
    store.save_snapshot(_snapshot(9, b"nine"))
    assert store.load_snapshot("demo") == _snapshot(9, b"nine")


def test_a_snapshot_of_another_version_is_replaced_even_at_the_same_event(store: Store) -> None:
    # After an upgrade nobody can use the old release's snapshot: if it stayed until the
    # next event, every local-mode process would replay the whole log in the meantime.
    assert isinstance(store, SnapshotStore)
    store.save_snapshot(_snapshot(7, b"old release", version="1-old"))
    store.save_snapshot(_snapshot(7, b"new release", version="1-new"))
    assert store.load_snapshot("demo") == _snapshot(7, b"new release", version="1-new")
    store.save_snapshot(_snapshot(7, b"same version again", version="1-new"))
    assert store.load_snapshot("demo") == _snapshot(7, b"new release", version="1-new")


def test_a_snapshot_larger_than_one_etcd_request_round_trips(store: Store) -> None:
    assert isinstance(store, SnapshotStore)
    body = os.urandom(1_300_000)  # etcd: three chunks; over its 1.5 MiB request limit x1
    store.save_snapshot(_snapshot(2, body))
    store.save_snapshot(_snapshot(3, body + b"!"))
    assert store.load_snapshot("demo") == _snapshot(3, body + b"!")
