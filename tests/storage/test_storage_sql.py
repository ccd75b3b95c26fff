"""The shared SQL transaction: its base-revision check costs the same on a long stream."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from detente.errors import ConcurrencyError
from detente.storage.base import NewEvent
from detente.storage.sql import SqlTx
from detente.storage.sqlite import SQLITE


class _Counted:
    """A SQLite connection with the schema, counting the VM steps of its queries."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.executescript(SQLITE.schema())
        self.steps = 0

        def step() -> int:
            self.steps += 1
            return 0

        self.conn.set_progress_handler(step, 1)

    def fetch(self, sql: str, params: Sequence[Any]) -> list[Any]:
        return self.conn.execute(sql, params).fetchall()

    def execute_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        self.conn.executemany(sql, rows)


def _renew(db: _Counted, subject: str, revision: int) -> int:
    """Append one event to ``subject`` expecting ``revision``; the VM steps of the flush."""
    tx = SqlTx(SQLITE, db.fetch, db.execute_many)
    event = NewEvent(f"e{subject}{revision}", "lease.renewed", 1, "demo", subject, {}, "t")
    tx.append([event], {subject: revision})
    before = db.steps
    tx.flush()
    return db.steps - before


def test_the_base_revision_check_costs_the_same_after_many_revisions_of_the_stream(
    tmp_path: Path,
) -> None:
    db = _Counted(tmp_path / "events.db")
    first = _renew(db, "claim/young", 0)
    for n in range(400):
        _renew(db, "claim/old", n)
    later = _renew(db, "claim/old", 400)
    # A check reading every earlier revision costs hundreds of steps more by now.
    assert later < first + 100


def test_a_stale_expected_revision_is_refused_naming_both_revisions(tmp_path: Path) -> None:
    db = _Counted(tmp_path / "events.db")
    _renew(db, "claim/c", 0)
    with pytest.raises(ConcurrencyError, match="stream claim/c is at revision 1, expected 0"):
        _renew(db, "claim/c", 0)
    with pytest.raises(ConcurrencyError, match="stream claim/new is at revision 0, expected 2"):
        _renew(db, "claim/new", 2)
