"""The embedded SQLite backend (``sqlite:///path``), the default store.

WAL journal, ``synchronous=FULL`` (a commit acknowledged to a client survives kill -9
and power loss), and ``BEGIN IMMEDIATE`` for every write transaction so that writers
from several processes (several CLIs, a server, git hooks) serialize on the database
file. Sequence numbers are assigned inside that transaction as ``max(seq) + 1``, so the
global sequence is the commit order. Triggers refuse any UPDATE or DELETE of an event:
the log is append-only at the storage level too. The schema and statements are shared
with PostgreSQL (:mod:`detente.storage.sql`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from detente.errors import StoreError
from detente.storage.sql import SCHEMA_MARK, Dialect, SqlReads, SqlTx

__all__ = ["SQLITE", "SqliteStore"]

SQLITE = Dialect(
    param="?",
    seq_type="INTEGER",
    append_only="""
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
""",
    races=(sqlite3.IntegrityError,),
)


class SqliteStore(SqlReads):
    """A SQLite file shared by every process of one repository.

    Args:
        path: database file; its directory is created if missing.
        busy_timeout: seconds a writer waits for another process's transaction.

    Raises:
        StoreError: ``store_unavailable`` when the file cannot be opened or migrated.
    """

    dialect = SQLITE

    def __init__(self, path: Path | str, *, busy_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(self.path), timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            # executescript commits first and runs each statement on its own; every
            # statement is idempotent, so concurrent first opens are safe.
            self._conn.executescript(SQLITE.schema())
            self._conn.execute(SCHEMA_MARK)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the SQLite store at {self.path}: {exc}") from exc

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _execute_many(self, sql: str, params: list[tuple[Any, ...]]) -> None:
        with self._lock:
            self._conn.executemany(sql, params)

    @contextmanager
    def transaction(self, repo: str) -> Iterator[SqlTx]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"the SQLite store is busy or unavailable: {exc}") from exc
            try:
                yield SqlTx(SQLITE, self._fetch, self._execute_many)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._conn.execute("ROLLBACK")
                raise StoreError(f"commit failed: {exc}") from exc

    # ------------------------------------------------------------------ time plan

    def clock_plan(self) -> str | None:
        """The lease-time plan every process on this machine follows (see
        :mod:`detente.storage.clock`)."""
        rows = self._fetch("SELECT value FROM meta WHERE key = 'clock_plan'")
        return str(rows[0][0]) if rows else None

    def save_clock_plan(self, plan: str) -> None:
        """Replace the lease-time plan."""
        try:
            self._execute_many(
                "INSERT INTO meta (key, value) VALUES ('clock_plan', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [(plan,)],
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot record the clock plan in {self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()
