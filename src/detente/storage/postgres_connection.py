"""The connections of the PostgreSQL store: a bounded pool, an I/O deadline, and errors
that name the endpoint, never the password (:class:`PgConnections`, a base class of
:class:`~detente.storage.postgres.PostgresStore`).

Failing fast: connections come from a ``psycopg-pool`` pool that waits at most
:data:`POOL_TIMEOUT` seconds for a free connection, connecting gives up after
:data:`CONNECT_TIMEOUT` seconds, and a call still waiting on the server after
:data:`IO_TIMEOUT` seconds has its socket shut down (:mod:`detente.storage.deadline`).
Every failure is ``store_unavailable`` naming the endpoint (never the password).
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from detente.errors import StoreError
from detente.storage.deadline import Watchdog

__all__ = [
    "CHECK_IDLE",
    "CONNECT_TIMEOUT",
    "IO_TIMEOUT",
    "POOL_TIMEOUT",
    "PgConnections",
    "describe",
    "rollback",
]

#: Seconds to wait for a free pooled connection.
POOL_TIMEOUT = 5.0
#: Seconds to establish a connection (libpq ``connect_timeout``, whole seconds).
CONNECT_TIMEOUT = 5
#: Seconds one read or one whole write transaction may wait on the server.
IO_TIMEOUT = 15.0
#: Seconds idle after which a pooled connection is checked before it is lent.
CHECK_IDLE = 2.0

_WATCHDOG = Watchdog()


def rollback(conn: psycopg.Connection[Any]) -> None:
    """Roll back a failed write transaction if the connection still can (a broken one
    is discarded by the pool; the server rolls back a transaction whose session ended)."""
    with contextlib.suppress(psycopg.Error):
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")


def describe(url: str) -> tuple[str, str | None]:
    """``("PostgreSQL at host:port/db", password)`` for messages that must not leak it."""
    try:
        info = conninfo_to_dict(url)
    except psycopg.Error:
        return "PostgreSQL (unparsable URL)", None
    where = f"{info.get('host') or 'localhost'}:{info.get('port') or 5432}/{info.get('dbname')}"
    password = info.get("password")
    return f"PostgreSQL at {where}", str(password) if password else None


class PgConnections:
    """Connecting, lending pooled connections and bounding each call in time, for
    :class:`~detente.storage.postgres.PostgresStore` (which sets the attributes below)."""

    url: str
    endpoint: str
    _password: str | None
    _io_timeout: float
    _returned: weakref.WeakKeyDictionary[psycopg.Connection[Any], float]
    _pool: ConnectionPool[psycopg.Connection[Any]]

    @staticmethod
    def _connect_args() -> dict[str, Any]:
        return {
            "autocommit": True,
            "connect_timeout": CONNECT_TIMEOUT,
            "keepalives": 1,
            "keepalives_idle": 5,
            "keepalives_interval": 2,
            "keepalives_count": 3,
        }

    def _error(self, what: str, exc: BaseException | None = None) -> StoreError:
        reason = " ".join(str(exc).split()) if exc is not None else ""
        detail = f"{self.endpoint}: {what}" + (f": {reason}" if reason else "")
        if self._password:
            detail = detail.replace(self._password, "***")
        return StoreError(detail)

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.url, **self._connect_args())
        except psycopg.Error as exc:
            raise self._error("cannot connect", exc) from exc

    def _check(self, conn: psycopg.Connection[Any]) -> None:
        """The pool's check before lending a connection: one that sat idle for
        :data:`CHECK_IDLE` seconds or more (the server may have restarted meanwhile) must
        answer a round trip, bounded in time; a busy one is lent as it is."""
        returned = self._returned.get(conn)
        if returned is None or time.monotonic() - returned < CHECK_IDLE:
            return
        with _WATCHDOG.guard(conn.fileno, self._io_timeout):
            conn.execute("SELECT 1")

    @contextmanager
    def _guarded(self, conn: psycopg.Connection[Any]) -> Iterator[psycopg.Connection[Any]]:
        """Use ``conn`` under the I/O deadline; psycopg errors become ``store_unavailable``."""
        try:
            with _WATCHDOG.guard(conn.fileno, self._io_timeout) as expired:
                try:
                    yield conn
                except psycopg.Error as exc:
                    if expired():
                        raise self._error(f"no answer within {self._io_timeout:g} s") from exc
                    raise
        except psycopg.Error as exc:
            raise self._error("request failed", exc) from exc

    @contextmanager
    def _pooled(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as conn, self._guarded(conn):
                try:
                    yield conn
                finally:
                    # When it was last used, for the check before it is lent again. Kept
                    # here rather than in a pool ``reset`` callback: with one, the pool
                    # hands every returned connection to a worker thread (a thread
                    # wake-up per transaction, and a connection away meanwhile).
                    self._returned[conn] = time.monotonic()
        except PoolTimeout as exc:
            raise self._error(
                f"no connection within {POOL_TIMEOUT:g} s (server unreachable, or all "
                f"{self._pool.max_size} connections busy)"
            ) from exc
