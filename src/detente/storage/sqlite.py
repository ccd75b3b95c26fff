"""The embedded SQLite backend (``sqlite:///path``), the default store.

WAL journal, ``synchronous=FULL`` (a commit acknowledged to a client survives kill -9
and power loss), and ``BEGIN IMMEDIATE`` for every write transaction so that writers
from several processes (several CLIs, a server, git hooks) serialize on the database
file. Sequence numbers are assigned inside that transaction as ``max(seq) + 1``, so the
global sequence is the commit order. Triggers refuse any UPDATE or DELETE of an event:
the log is append-only at the storage level too. The schema and statements are shared
with PostgreSQL (:mod:`detente.storage.sql`).

Reads outside a transaction run on a read-only connection of the calling thread: under
WAL a reader sees the last committed state without waiting for a writer, so a health
check, an event stream or a claim listing never queues behind a long write. Reads inside
:meth:`SqliteStore.transaction` (on its thread) use the writer's connection and see the
transaction's own writes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from detente.errors import StoreError
from detente.eventlog.records import LeaseRow
from detente.storage.sql import SCHEMA_MARK, Dialect, SqlReads, SqlTx
from detente.storage.sql_leases import lease_rows_after
from detente.storage.sql_snapshots import SqlSnapshots

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


class SqliteStore(SqlSnapshots, SqlReads):
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
        self._busy_timeout = busy_timeout
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self._writing: int | None = None  # the thread inside transaction(), if any
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
        if self._writing == threading.get_ident():
            return self._write_fetch(sql, params)
        try:
            return self._reader().execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:  # locked, I/O: the store, not a bug
            raise StoreError(f"cannot read the SQLite store at {self.path}: {exc}") from exc

    def _write_fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _reader(self) -> sqlite3.Connection:
        """This thread's read-only connection (opened on first use)."""
        if self._closed:  # as the writer connection would: using a closed store is a bug
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                str(self.path),
                timeout=self._busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute("PRAGMA query_only=ON")
            with self._readers_lock:  # never the writer's lock: a read must not wait
                self._readers.append(conn)
            self._local.conn = conn
        return conn

    def _execute_many(self, sql: str, params: list[tuple[Any, ...]]) -> None:
        with self._lock:
            self._conn.executemany(sql, params)

    def _write(self, sql: str, params: Sequence[Any]) -> None:
        try:
            self._execute_many(sql, [tuple(params)])
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write the SQLite store at {self.path}: {exc}") from exc

    @contextmanager
    def transaction(self, repo: str) -> Iterator[SqlTx]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"the SQLite store is busy or unavailable: {exc}") from exc
            self._writing = threading.get_ident()
            try:
                tx = SqlTx(SQLITE, self._write_fetch, self._execute_many)
                yield tx
                tx.flush()
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            finally:
                self._writing = None
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._conn.execute("ROLLBACK")
                raise StoreError(f"commit failed: {exc}") from exc

    def leases_after(self, stamp: int, repo: str) -> list[LeaseRow]:
        """See :meth:`detente.storage.base.LeaseStore.leases_after` (the lease rows let a
        renewal append no event: :mod:`detente.storage.sql_leases`)."""
        return lease_rows_after(self._fetch, stamp, repo)

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
        with self._lock, self._readers_lock:
            self._closed = True
            for reader in self._readers:
                reader.close()
            self._readers.clear()
            self._conn.close()
