"""The replay ledger: short-lived keys remembered in the store, shared by every server.

Two protections must outlive a server process and hold across several processes on one
store: the nonces of RFC 9421 signed requests (a captured request replayed after a
restart, or sent to another server, must still be refused while its ``created`` is in
the window) and the kept answers of ``Idempotency-Key`` requests (a retry after a
restart gets the original answer, not a second run). Neither belongs in the event log
(they are not facts about claims, and they expire), so they live in a small ledger
beside it: ``key -> (value, expires_at)``.

:func:`ledger_for` gives the ledger of a store: a table ``replay_ledger`` in the same
SQLite file or PostgreSQL database (own connection, opened on first use), keys under
``/<prefix>/ledger/`` of an etcd cluster, or a process memory dict for the memory
store. Times are POSIX seconds from the caller's clock (the service clock), so a fake
clock drives expiry in tests.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from pathlib import Path
from typing import Protocol

from detente.errors import StoreError

__all__ = ["MemoryLedger", "ReplayLedger", "SqliteLedger", "ledger_for"]

#: Expired rows are purged once per this many writes (and rows are never served expired).
PURGE_EVERY = 256


class ReplayLedger(Protocol):
    """Keys with an expiry, written atomically across every process sharing the store.

    Keys are short printable strings (callers hash what they remember: PostgreSQL text
    holds no NUL byte).
    """

    def first_use(self, key: str, *, now: float, expires_at: float) -> bool:
        """Record ``key`` until ``expires_at``; True when it was not recorded already
        (or its earlier record had expired), False when it is a reuse.

        Raises:
            StoreError: ``store_unavailable`` when the store cannot be reached.
        """
        ...

    def put(self, key: str, value: bytes, *, expires_at: float) -> None:
        """Keep ``value`` under ``key`` until ``expires_at`` (replacing any earlier)."""
        ...

    def get(self, key: str, *, now: float) -> bytes | None:
        """The value kept under ``key``, or None (never kept, or expired)."""
        ...


class MemoryLedger:
    """A ledger in this process's memory (the memory store; tests)."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[bytes, float]] = {}
        self._lock = threading.Lock()
        self._writes = 0

    def _purge(self, now: float) -> None:
        self._writes += 1
        if self._writes % PURGE_EVERY == 0:
            for key in [k for k, (_, exp) in self._rows.items() if exp <= now]:
                del self._rows[key]

    def first_use(self, key: str, *, now: float, expires_at: float) -> bool:
        with self._lock:
            self._purge(now)
            kept = self._rows.get(key)
            if kept is not None and kept[1] > now:
                return False
            self._rows[key] = (b"", expires_at)
            return True

    def put(self, key: str, value: bytes, *, expires_at: float) -> None:
        with self._lock:
            self._rows[key] = (value, expires_at)

    def get(self, key: str, *, now: float) -> bytes | None:
        with self._lock:
            kept = self._rows.get(key)
            return kept[0] if kept is not None and kept[1] > now else None


_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS replay_ledger (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    expires_at REAL NOT NULL
)
"""


class SqliteLedger:
    """The ledger as table ``replay_ledger`` of a SQLite store's file.

    Args:
        path: the store's database file.
        busy_timeout: seconds to wait for another process's write lock.
    """

    def __init__(self, path: Path, *, busy_timeout: float = 30.0) -> None:
        self.path = path
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._writes = 0

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(
                str(self.path),
                timeout=self._busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute(_SQLITE_SCHEMA)
            self._conn = conn
        return self._conn

    def _failed(self, exc: sqlite3.Error) -> StoreError:
        return StoreError(f"cannot use the replay ledger in {self.path}: {exc}")

    def first_use(self, key: str, *, now: float, expires_at: float) -> bool:
        with self._lock:
            try:
                conn = self._connection()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    self._writes += 1
                    if self._writes % PURGE_EVERY == 0:
                        conn.execute("DELETE FROM replay_ledger WHERE expires_at <= ?", (now,))
                    else:
                        conn.execute(
                            "DELETE FROM replay_ledger WHERE key = ? AND expires_at <= ?",
                            (key, now),
                        )
                    cursor = conn.execute(
                        "INSERT OR IGNORE INTO replay_ledger (key, value, expires_at) "
                        "VALUES (?, ?, ?)",
                        (key, b"", expires_at),
                    )
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                return cursor.rowcount == 1
            except sqlite3.Error as exc:
                raise self._failed(exc) from exc

    def put(self, key: str, value: bytes, *, expires_at: float) -> None:
        with self._lock:
            try:
                self._connection().execute(
                    "INSERT OR REPLACE INTO replay_ledger (key, value, expires_at) "
                    "VALUES (?, ?, ?)",
                    (key, value, expires_at),
                )
            except sqlite3.Error as exc:
                raise self._failed(exc) from exc

    def get(self, key: str, *, now: float) -> bytes | None:
        with self._lock:
            try:
                row = (
                    self._connection()
                    .execute(
                        "SELECT value FROM replay_ledger WHERE key = ? AND expires_at > ?",
                        (key, now),
                    )
                    .fetchone()
                )
            except sqlite3.Error as exc:
                raise self._failed(exc) from exc
        return bytes(row[0]) if row is not None else None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


_LEDGERS: weakref.WeakKeyDictionary[object, ReplayLedger] = weakref.WeakKeyDictionary()
_LEDGERS_LOCK = threading.Lock()


def ledger_for(store: object) -> ReplayLedger:
    """The replay ledger beside ``store`` (one per store object, created on first use).

    Args:
        store: an open store (:mod:`detente.storage.factory`).

    Returns:
        A :class:`SqliteLedger` for a SQLite file, a PostgreSQL ledger
        (:mod:`detente.storage.ledger_postgres`) for a PostgreSQL store, an etcd ledger
        (:mod:`detente.storage.ledger_etcd`) for an etcd store, else a
        :class:`MemoryLedger` (this process only).
    """
    with _LEDGERS_LOCK:
        ledger = _LEDGERS.get(store)
        if ledger is None:
            ledger = _LEDGERS[store] = _new_ledger(store)
        return ledger


def _new_ledger(store: object) -> ReplayLedger:
    url = str(getattr(store, "url", ""))
    if url.startswith("sqlite:///") and isinstance(getattr(store, "path", None), Path):
        return SqliteLedger(store.path)  # type: ignore[attr-defined]
    if url.startswith(("postgresql://", "postgres://")):
        from detente.storage.ledger_postgres import PostgresLedger

        return PostgresLedger(url)
    if url.startswith("etcd://"):
        from detente.storage.ledger_etcd import EtcdLedger

        return EtcdLedger(url)
    return MemoryLedger()
