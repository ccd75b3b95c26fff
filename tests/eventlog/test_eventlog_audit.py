"""The audit: a tampered event or projection row is found; an intact log verifies."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.state import RepoState
from detente.errors import ValidationError
from detente.eventlog.envelope import canonical_json
from detente.eventlog.projections import apply_stored
from detente.eventlog.records import RecordRow
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import seed


def _service(db: Path) -> Service:
    return Service(SqliteStore(db), FakeClock(), [RepoConfig("demo")])


def test_canonical_json_is_key_order_independent() -> None:
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == canonical_json(
        {"a": [1, {"c": 3, "d": 2}], "b": 1}
    )


def test_an_edited_event_breaks_the_chain_at_that_event(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    svc = _service(db)
    for i in range(3):
        svc.claims.open_claim(seed(f"f{i}.py"))
    assert svc.audit().ok
    svc.store.close()
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("""UPDATE events SET data = replace(data, 'f1.py', 'evil.py') WHERE seq = 3""")
    conn.commit()
    conn.close()
    report = _service(db).audit(full=True)  # an incremental run starts after event 3
    assert not report.ok and report.broken is not None and report.broken.seq == 3


def test_a_second_audit_verifies_only_the_events_appended_since_the_first(
    tmp_path: Path,
) -> None:
    svc = _service(tmp_path / "d.db")
    for i in range(3):
        svc.claims.open_claim(seed(f"f{i}.py", agent=f"a{i}"))
    first = svc.audit()
    assert first.ok and first.events == svc.head()
    head = svc.head()
    svc.claims.open_claim(seed("g.py", agent="g"))
    again = _service(tmp_path / "d.db").audit()  # another process: the mark is in the store
    assert again.ok and again.events == svc.head() - head > 0
    assert svc.audit().events == 0  # nothing new
    assert svc.audit(full=True).events == svc.head()


def test_an_empty_log_passes_every_audit(tmp_path: Path) -> None:
    svc = _service(tmp_path / "d.db")
    assert svc.audit().ok and svc.audit().ok  # nothing verified, nothing kept


def test_an_edit_of_the_event_the_last_audit_verified_is_reported_by_the_next(
    tmp_path: Path,
) -> None:
    db = tmp_path / "d.db"
    svc = _service(db)
    for i in range(3):
        svc.claims.open_claim(seed(f"f{i}.py", agent=f"a{i}"))
    assert svc.audit().ok
    head = svc.head()
    svc.store.close()
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET hash = ? WHERE seq = ?", ("0" * 64, head))
    conn.commit()
    conn.close()
    report = _service(db).audit()
    assert not report.ok and report.broken is not None and report.broken.seq == head


def test_a_projection_row_that_differs_from_replay_is_reported(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    svc = _service(db)
    claim = svc.claims.open_claim(seed("a.py")).claim
    svc.store.close()
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE records SET body = replace(body, '\"active\"', '\"completed\"') WHERE id = ?",
        (claim.id,),
    )
    conn.commit()
    conn.close()
    report = _service(db).audit()
    assert not report.ok
    assert report.mismatches == [f"claim/{claim.id}: differs from replay in status"]


class _WritesDuringAudit(SqliteStore):
    """A real SQLite store that lets a command commit between the audit's log read and
    its projection read (as a live server does), a given number of times."""

    def __init__(self, db: Path) -> None:
        super().__init__(db)
        self.write: Callable[[], object] = lambda: None
        self.times = 0

    def records(self, kind: str, repo: str | None = None) -> list[RecordRow]:
        if self.times and kind == "claim":
            self.times -= 1
            self.write()
        return super().records(kind, repo)


def test_writes_committed_while_the_audit_runs_are_not_reported_as_mismatches(
    tmp_path: Path,
) -> None:
    store = _WritesDuringAudit(tmp_path / "d.db")
    svc = Service(store, FakeClock(), [RepoConfig("demo")])
    first = svc.claims.open_claim(seed("a.py")).claim
    opened = iter(range(100))
    store.write = lambda: svc.claims.open_claim(seed(f"new{next(opened)}.py"))
    store.times = 2  # a new claim appears during the first two comparisons
    report = svc.audit()
    assert report.ok, report.mismatches
    assert report.events == len(store.read(limit=10_000))
    assert first.id in {r.id for r in store.records("claim")}


def test_a_row_that_differs_at_the_same_revision_is_reported_at_once(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    svc = _service(db)
    claim = svc.claims.open_claim(seed("a.py")).claim
    svc.store.close()
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE records SET body = replace(body, 'a.py', 'evil.py') WHERE id = ?", (claim.id,)
    )
    conn.commit()
    conn.close()
    report = _service(db).audit()
    assert not report.ok
    assert any(m.startswith(f"claim/{claim.id}: differs") for m in report.mismatches)


def test_a_pattern_stored_under_an_earlier_policy_still_replays(tmp_path: Path) -> None:
    svc = _service(tmp_path / "d.db")
    claim = svc.claims.open_claim(seed("a.py")).claim
    old_patterns = [" ", "x" + "*a" * 40, ".git/config"]  # accepted by earlier releases
    state = RepoState("demo")
    for event in svc.store.read(limit=100):
        if event.type == "claim.announced":
            event = replace(event, data={**event.data, "paths": old_patterns})
        apply_stored(state, event)
    assert state.claims[claim.id].paths == tuple(old_patterns)
    assert [key for key, _ in state.claims.path_index.matching(" ")] == [claim.id]
    with pytest.raises(ValidationError):
        svc.claims.open_claim(seed(" "))  # today's policy still refuses it as new input
