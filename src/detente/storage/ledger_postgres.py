"""The replay ledger (:mod:`detente.storage.ledger`) in a PostgreSQL store's database.

Table ``replay_ledger``; one connection of its own, opened on first use and opened again
after a failure. "First use" is one statement, atomic across every server sharing the
database: ``INSERT ... ON CONFLICT (key) DO UPDATE ... WHERE replay_ledger.expires_at <=
now`` writes a row only when the key is new or its earlier record has expired.
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg

from detente.errors import StoreError
from detente.storage.ledger import PURGE_EVERY
from detente.storage.postgres import CONNECT_TIMEOUT, describe

__all__ = ["PostgresLedger"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replay_ledger (
    key TEXT PRIMARY KEY,
    value BYTEA NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
)
"""
#: Serializes the first ``CREATE TABLE IF NOT EXISTS`` of concurrent servers (which can
#: otherwise race on the catalog's unique index).
_SCHEMA_LOCK = 0x6465_7465_6C65_6467


class PostgresLedger:
    """The ledger as table ``replay_ledger`` of a PostgreSQL database.

    Args:
        url: the store's libpq URL.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.endpoint, self._password = describe(url)
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._writes = 0

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                conn.execute(_SCHEMA)
            self._conn = conn
        return self._conn

    def _run(self, sql: str, params: tuple[Any, ...]) -> psycopg.Cursor[Any]:
        """Run one statement (reconnecting once when the connection was lost)."""
        for attempt in (1, 2):
            try:
                return self._connection().execute(sql, params)
            except psycopg.OperationalError as exc:
                if self._conn is not None:
                    self._conn.close()
                self._conn = None
                if attempt == 2:
                    raise self._failed(exc) from exc
            except psycopg.Error as exc:
                raise self._failed(exc) from exc
        raise AssertionError("unreachable")

    def _failed(self, exc: BaseException) -> StoreError:
        detail = f"{self.endpoint}: replay ledger: {' '.join(str(exc).split())}"
        if self._password:
            detail = detail.replace(self._password, "***")
        return StoreError(detail)

    def first_use(self, key: str, *, now: float, expires_at: float) -> bool:
        with self._lock:
            self._writes += 1
            if self._writes % PURGE_EVERY == 0:
                self._run("DELETE FROM replay_ledger WHERE expires_at <= %s", (now,))
            cursor = self._run(
                "INSERT INTO replay_ledger (key, value, expires_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, "
                "expires_at = EXCLUDED.expires_at WHERE replay_ledger.expires_at <= %s",
                (key, b"", expires_at, now),
            )
            return cursor.rowcount == 1

    def put(self, key: str, value: bytes, *, expires_at: float) -> None:
        with self._lock:
            self._run(
                "INSERT INTO replay_ledger (key, value, expires_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, "
                "expires_at = EXCLUDED.expires_at",
                (key, value, expires_at),
            )

    def get(self, key: str, *, now: float) -> bytes | None:
        with self._lock:
            row = self._run(
                "SELECT value FROM replay_ledger WHERE key = %s AND expires_at > %s", (key, now)
            ).fetchone()
        return bytes(row[0]) if row is not None else None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
