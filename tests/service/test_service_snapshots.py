"""Projection snapshots through the service: a process starts from the newest sound
snapshot plus the log's tail; an unsound one is ignored with a log line, never trusted."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import pickle
import zlib

import pytest

from detente.clock import FakeClock
from detente.domain.claims.record import claim_to_wire
from detente.eventlog import snapshots
from detente.eventlog.snapshots import Snapshot, snapshot_version
from detente.service import RepoConfig, Service
from detente.storage.base import SnapshotStore, Store
from detente.storage.memory import MemoryStore

from support import counting_ids, seed


def _service(store: Store, clock: FakeClock, *, every: int = 1000) -> Service:
    service = Service(store, clock, [RepoConfig("demo")], ids=counting_ids())
    service.checkpoints.every = every
    return service


def _wire(service: Service) -> list[dict[str, object]]:
    claims = service.fresh("demo").claims
    return [claim_to_wire(claims[claim_id]) for claim_id in sorted(claims)]


def test_a_new_process_starts_from_the_snapshot_and_folds_only_the_tail(
    store: Store, clock: FakeClock
) -> None:
    first = _service(store, clock, every=5)
    for i in range(7):  # two events each: snapshots at 6 and 12, a tail of 2
        first.claims.open_claim(seed(f"c{i}/**", agent=f"a{i}"))
    assert isinstance(store, SnapshotStore)
    saved = store.load_snapshot("demo")
    assert saved is not None and 5 <= saved.seq < first.head()
    second = _service(store, clock)
    assert second.checkpoints.start("demo").last_seq == saved.seq
    assert _wire(second) == _wire(first)
    assert second.audit().ok


def test_a_clean_shutdown_saves_a_snapshot_at_the_head(store: Store, clock: FakeClock) -> None:
    first = _service(store, clock)
    for i in range(3):
        first.claims.open_claim(seed(f"c{i}/**", agent=f"a{i}"))
    assert isinstance(store, SnapshotStore) and store.load_snapshot("demo") is None
    first.save_snapshots()
    later = _service(store, clock)
    assert later.checkpoints.start("demo").last_seq == first.head()
    assert _wire(later) == _wire(first)


def test_audit_verify_still_replays_the_whole_log_when_a_snapshot_exists(
    clock: FakeClock,
) -> None:
    store = MemoryStore()
    service = _service(store, clock, every=2)
    for i in range(4):
        service.claims.open_claim(seed(f"c{i}/**", agent=f"a{i}"))
    report = service.audit()
    assert report.ok and report.events == service.head()


def _saved(clock: FakeClock) -> tuple[MemoryStore, Snapshot, list[dict[str, object]]]:
    store = MemoryStore()
    service = _service(store, clock)
    for i in range(3):
        service.claims.open_claim(seed(f"c{i}/**", agent=f"a{i}"))
    service.save_snapshots()
    snapshot = store.load_snapshot("demo")
    assert snapshot is not None
    return store, snapshot, _wire(service)


def _signed(snapshot: Snapshot, body: bytes) -> Snapshot:
    return dataclasses.replace(snapshot, body=body, digest=hashlib.sha256(body).hexdigest())


@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        (lambda s: dataclasses.replace(s, version="1-0000000000000000"), "version"),
        (lambda s: dataclasses.replace(s, hash="f" * 64), "not the one it names"),
        (lambda s: dataclasses.replace(s, seq=s.seq + 50), "has no event"),
        (lambda s: dataclasses.replace(s, body=s.body + b"x"), "digest"),
        (lambda s: _signed(s, zlib.compress(pickle.dumps(os.getcwd))), "not part of a state"),
        (lambda s: _signed(s, b"not zlib"), "does not decode"),
        (lambda s: _signed(s, s.body[: len(s.body) // 2]), "does not decode"),
        (lambda s: _signed(s, zlib.compress(pickle.dumps({"a": 1}))), "not this repository"),
    ],
    ids=[
        "version",
        "chain",
        "seq",
        "digest",
        "foreign-global",
        "garbage",
        "truncated",
        "not-a-state",
    ],
)
def test_an_unsound_snapshot_is_ignored_with_a_log_line_and_the_log_replayed(
    clock: FakeClock, caplog: pytest.LogCaptureFixture, spoil: object, why: str
) -> None:
    store, snapshot, claims = _saved(clock)
    bad = spoil(snapshot)  # type: ignore[operator]
    store._snapshots["demo"] = bad
    later = _service(store, clock)
    logger = logging.getLogger("detente.storage")  # direct: a server may stop propagation
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING, logger="detente.storage"):
            assert later.checkpoints.start("demo").last_seq == 0
    finally:
        logger.removeHandler(caplog.handler)
    [line] = {r.getMessage() for r in caplog.records if "snapshot" in r.getMessage()}
    assert "ignoring the projection snapshot of demo" in line and why in line
    assert _wire(later) == claims


def test_a_snapshot_inflated_a_few_bytes_at_a_time_restores_the_same_claims(
    clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, snapshot, claims = _saved(clock)
    monkeypatch.setattr(snapshots, "_INFLATE_CHUNK", 7)
    later = _service(store, clock)
    assert later.checkpoints.start("demo").last_seq == snapshot.seq
    assert _wire(later) == claims


def test_the_snapshot_version_names_the_format_and_the_fold_source() -> None:
    format_number, _, fingerprint = snapshot_version().partition("-")
    assert format_number == "1" and len(fingerprint) == 16
