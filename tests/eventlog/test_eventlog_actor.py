"""Every event records its actor inside the hash chain; old logs replay as ``local``."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

from detente.clock import FakeClock
from detente.domain.state import RepoState
from detente.eventlog.envelope import NewEvent
from detente.eventlog.projections import apply_stored, rows_for, verify
from detente.security.identity import LOCAL, Principal, acting_as
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import counting_ids, seed

ALICE = Principal("alice@example.com", "oidc", roles=frozenset({"claim"}))
BOT = Principal("ci-bot", "key", key_fingerprint="ab" * 32, roles=frozenset({"claim"}))


def _service(store: SqliteStore, clock: FakeClock | None = None) -> Service:
    return Service(store, clock or FakeClock(), [RepoConfig("demo")], ids=counting_ids())


def test_every_event_of_a_command_records_the_principal_that_issued_it(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d.db")
    service = _service(store)
    with acting_as(ALICE):
        view = service.claims.open_claim(seed("src/a.py"))
    with acting_as(BOT):
        service.claims.open_claim(seed("src/b.py", agent="bot"))

    actors = [(e.type, e.data["actor"]) for e in store.read()]
    assert ("claim.announced", {"principal": "alice@example.com", "via": "oidc"}) in actors
    assert (
        "claim.announced",
        {"principal": "ci-bot", "via": "key", "keyFingerprint": "ab" * 32},
    ) in actors
    assert view.claim.principal == "alice@example.com"
    assert verify(store, {"demo": False}).ok


def test_without_a_bound_principal_events_record_the_local_actor(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d.db")
    view = _service(store).claims.open_claim(seed("src/a.py"))
    assert {e.data["actor"]["principal"] for e in store.read()} == {LOCAL.name}
    assert view.to_wire()["claim"]["principal"] == "local"


def test_lease_expiry_found_during_a_command_is_recorded_as_the_system(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d.db")
    clock = FakeClock()
    service = _service(store, clock)
    with acting_as(ALICE):
        service.claims.open_claim(seed("src/a.py", ttl=30))
    clock.advance(31)
    with acting_as(BOT):
        service.claims.open_claim(seed("src/b.py", agent="bot"))
    [expired] = [e for e in store.read() if e.type == "claim.expired"]
    assert expired.data["actor"] == {"principal": "system", "via": "local"}


def test_rewriting_an_events_actor_breaks_the_hash_chain(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d.db")
    with acting_as(ALICE):
        _service(store).claims.open_claim(seed("src/a.py"))
    first = store.read()[0]
    store.close()
    conn = sqlite3.connect(tmp_path / "d.db")
    with conn:
        conn.execute("DROP TRIGGER events_no_update")
        conn.execute(
            "UPDATE events SET data = replace(data, 'alice@example.com', 'mallory') WHERE seq = ?",
            (first.seq,),
        )
    conn.close()
    report = _service(SqliteStore(tmp_path / "d.db")).audit()
    assert not report.ok and report.broken is not None and report.broken.seq == first.seq


def test_a_log_written_before_actors_replays_every_event_as_local_and_audits_clean(
    tmp_path: Path,
) -> None:
    today = SqliteStore(tmp_path / "today.db")
    with acting_as(ALICE):
        _service(today).claims.open_claim(seed("src/a.py"))
    old = SqliteStore(tmp_path / "old.db")
    state = RepoState("demo")
    with old.transaction("demo") as tx:
        for event in today.read():
            data = {k: v for k, v in event.data.items() if k != "actor"}
            expected = {event.subject: event.subject_revision - 1}
            old_style = NewEvent(
                event.id, event.type, event.version, "demo", event.subject, data, event.at
            )
            [stored] = tx.append([old_style], expected)
            assert "actor" not in stored.data
            apply_stored(state, stored)
            tx.upsert_records(rows_for(state, [stored.subject]))

    report = _service(old).audit()
    claim = _service(old).claims.list_claims(repo="demo")[0]
    assert report.ok, dataclasses.asdict(report)
    assert claim.principal == "local"
