"""The PostgreSQL backend (``postgresql://user@host:port/db``): several servers, one log.

Every write takes ``pg_advisory_xact_lock(APPEND_LOCK)``: one lock for the whole
database, not one per repository, held until COMMIT. A transaction takes it at ``BEGIN``,
before it decides anything, or, started from the head this store's own last commit left
(:mod:`detente.storage.postgres_tx`), in the one call that writes, which then checks
under the lock that the head has not moved. Why global:

- the log has ONE sequence and ONE hash chain across all repositories: an event's
  ``prev_hash`` is the hash of the event committed just before it, whatever its repo, so
  appends are serial by nature;
- readers follow the log with ``WHERE seq > last_seen``. With a plain ``SEQUENCE`` two
  transactions could take 5 and 6 and commit 6 first; a reader would see 6, move its
  cursor past 5 and never see 5 when it commits late. Under the lock, ``max(seq) + 1``
  is taken after the previous writer committed (READ COMMITTED: every statement after
  the lock sees it), so sequence order *is* commit order and no reader can skip an event;
- the overlap analysis a command runs is atomic with its claim write across servers:
  either the lock is taken before the service catches its projection up
  (``read_after``), or the write is refused unless the log is still at the head the
  projection was caught up to.

The schema and statements are shared with SQLite (:mod:`detente.storage.sql`); triggers
refuse UPDATE, DELETE and TRUNCATE of events. ``pg_notify`` in the appending transaction
(delivered at COMMIT) wakes watchers on every server; they then replay from the
sequence, so a lost notification costs latency, never an event. :meth:`PostgresStore.now`
is the database's clock, the lease-time authority shared by every server (see
:mod:`detente.storage.clock`); inside a transaction it is read on the transaction's own
connection, so a write never needs a second connection while it holds the lock.

Failing fast: the connections (a bounded pool, an I/O deadline, errors naming the
endpoint, never the password) are :mod:`detente.storage.postgres_connection`'s.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool

from detente.errors import ConcurrencyError, StoreError
from detente.eventlog.records import LeaseRow
from detente.eventlog.subscription import Broadcaster
from detente.storage.etcd_head import Head
from detente.storage.postgres_connection import (
    CHECK_IDLE,
    CONNECT_TIMEOUT,
    IO_TIMEOUT,
    POOL_TIMEOUT,
    PgConnections,
    describe,
    rollback,
)
from detente.storage.postgres_memory import PgMemory
from detente.storage.postgres_renew import RENEW_FUNCTION, commit_renewal
from detente.storage.postgres_tx import (
    COMMIT_FUNCTION,
    PgTx,
    begin,
    commit_locked,
    commit_remembered,
    lost_race,
)
from detente.storage.sql import SCHEMA_MARK, Dialect, SqlReads, SqlTx
from detente.storage.sql_leases import lease_rows_after
from detente.storage.sql_snapshots import SqlSnapshots
from detente.storage.watch_health import WatchHealth

__all__ = [
    "APPEND_LOCK",
    "CHANNEL",
    "CHECK_IDLE",
    "CONNECT_TIMEOUT",
    "IO_TIMEOUT",
    "POOL_TIMEOUT",
    "POSTGRES",
    "SCHEMA_LOCK",
    "PostgresStore",
    "describe",
]

#: The advisory lock key serializing every write transaction ("detente" in ASCII).
APPEND_LOCK = 0x64_65_74_65_6E_74_65
#: Separate key serializing concurrent first-time schema creation by several servers.
SCHEMA_LOCK = APPEND_LOCK + 1
#: ``LISTEN``/``NOTIFY`` channel; the payload is the last committed sequence.
CHANNEL = "detente_events"

POSTGRES = Dialect(
    param="%s",
    seq_type="BIGINT",
    append_only="""
CREATE OR REPLACE FUNCTION detente_append_only() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN RAISE EXCEPTION 'the event log is append-only'; END $$;
CREATE OR REPLACE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
FOR EACH ROW EXECUTE FUNCTION detente_append_only();
CREATE OR REPLACE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
FOR EACH STATEMENT EXECUTE FUNCTION detente_append_only();
""",
    races=(pg_errors.UniqueViolation,),
    blob_type="BYTEA",
)


class PostgresStore(PgConnections, SqlSnapshots, SqlReads):
    """One PostgreSQL database shared by any number of detente servers.

    Args:
        url: a libpq URL, ``postgresql://user:password@host:port/dbname?...``.
        pool_size: connections kept per store (commands and readers share them; the
            ``LISTEN`` watcher has its own).
        io_timeout: seconds a read or a write transaction may wait on the server.

    Raises:
        StoreError: ``store_unavailable`` when the database cannot be reached or migrated.
    """

    dialect = POSTGRES

    def __init__(self, url: str, *, pool_size: int = 8, io_timeout: float = IO_TIMEOUT) -> None:
        self.url = url
        self.endpoint, self._password = describe(url)
        self._io_timeout = io_timeout
        self._listeners = Broadcaster()
        self.watch_health = WatchHealth("postgres listen")
        self._listener_thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._hearing: Callable[[], None] | None = None
        self._hearing_lock = threading.Lock()
        self._stop = threading.Event()
        self._local = threading.local()
        #: The head this store's last commit left and the last clock reading.
        self.memory = PgMemory()
        self._returned: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = (
            weakref.WeakKeyDictionary()
        )
        with self._connect() as conn, self._guarded(conn), conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            conn.execute(POSTGRES.schema())
            conn.execute(COMMIT_FUNCTION)
            conn.execute(RENEW_FUNCTION)
            conn.execute(SCHEMA_MARK)
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            kwargs=self._connect_args(),
            min_size=1,
            max_size=pool_size,
            timeout=POOL_TIMEOUT,
            check=self._check,
            name="detente",
            open=True,
        )

    # ------------------------------------------------------------------ connections

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Run a SELECT: inside :meth:`transaction` (same thread) on the transaction's own
        connection, so a write never waits for a second one while it holds the lock."""
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn.execute(sql, params).fetchall()
        with self._pooled() as pooled:
            return pooled.execute(sql, params).fetchall()

    def _write(self, sql: str, params: Sequence[Any]) -> None:
        """One autocommitted statement outside any transaction (a snapshot row)."""
        with self._pooled() as pooled:
            pooled.execute(sql, params)

    # ------------------------------------------------------------------ writes

    def transaction(self, repo: str) -> AbstractContextManager[SqlTx]:
        """:meth:`transaction_for` a batch that may append events."""
        return self.transaction_for(repo, appends=True)

    @contextmanager
    def transaction_for(self, repo: str, *, appends: bool) -> Iterator[SqlTx]:
        """A write transaction: from memory in one round trip, else under the global
        append lock in two (see :mod:`detente.storage.postgres_tx`). From memory, a
        transaction that only moves lease rows (renewals) is written without comparing
        the lease head (:mod:`detente.storage.postgres_renew`); when other servers' rows
        lay below its own, ``tx.unseen_leases`` is set once it committed. A batch that
        ``appends`` events starts locked once another writer is known
        (:attr:`~detente.storage.postgres_memory.PgMemory.contended`).

        Raises:
            ConcurrencyError: ``store_concurrency`` when an expected revision lost a race
                or another server committed after the head this one started from.
            StoreError: ``store_unavailable`` when the database fails or does not answer
                within the I/O timeout; after a connection loss during COMMIT the outcome
                is checked, so a committed command is never reported as failed.
        """
        appended: list[str] = []
        clock: datetime | None = None
        start = None
        try:
            with self._pooled() as conn:

                def fetch(sql: str, params: Sequence[Any]) -> list[Any]:
                    cur = conn.execute(sql, params)
                    return cur.fetchall() if cur.description is not None else []

                self._local.conn = conn
                start = self.memory.take(appends=appends)
                try:
                    if start is None:
                        head, now, last, stamp = begin(conn, APPEND_LOCK)
                        self.memory.saw_clock(now)
                    else:
                        head, now = (start.head.seq, start.head.hash), start.now
                        last, stamp = start.head.at, start.head.lease_stamp
                    self._local.reading = (now, last)
                    follow = start is None or appends or not self.memory.contended
                    tx = PgTx(POSTGRES, fetch, head, stamp, follow_leases=follow)
                    try:
                        yield tx
                        renewal = None if start is None else tx.renewal(APPEND_LOCK)
                        params = tx.write(APPEND_LOCK, CHANNEL) if renewal is None else None
                        appended = [e.id for e in tx.appended[:1]]
                        try:
                            if renewal is not None:
                                clock, shift = commit_renewal(conn, renewal)
                                tx.saw_shift(shift)
                                self.memory.contended |= shift > 0
                            elif start is None:
                                clock = commit_locked(conn, params)
                            else:
                                clock = commit_remembered(conn, params, head[0], tx.compared)
                        except psycopg.Error as exc:
                            race = lost_race(exc)
                            if race is None:
                                raise
                            appended = []  # refused: certainly not committed
                            raise race from exc
                    except BaseException:
                        rollback(conn)
                        raise
                finally:
                    self._local.conn = None
                    self._local.reading = None
        except ConcurrencyError as exc:
            self.memory.heads.lost()
            self.memory.contended = True
            exc.remembered = start is not None
            self._hear_others()
            raise
        except StoreError as exc:
            self.memory.heads.forget()
            lost_reply = isinstance(exc.__cause__, psycopg.OperationalError)
            if appended and lost_reply and self._committed(appended[0]):
                return
            raise
        except BaseException:
            self.memory.heads.forget()
            raise
        if clock is not None:
            self.memory.saw_clock(clock)
        tail = tx.appended[-1] if tx.appended else None
        stamp = tx.lease_head
        if tail is not None:
            self.memory.keep(Head(tail.seq, tail.hash, 0, 0, at=tail.at, lease_stamp=stamp))
        else:
            self.memory.keep(Head(head[0], head[1], 0, 0, at=last, lease_stamp=stamp))

    def _hear_others(self) -> None:
        """Another server writes to this database: from now on hear its commits
        (``LISTEN``), so a transaction does not start from a head known to be stale
        (:meth:`~detente.storage.postgres_memory.PgMemory.heard`). Started on the first
        lost race: a lone server keeps no listening connection for it."""
        if self._hearing is None:
            with self._hearing_lock:
                if self._hearing is None:
                    self._hearing = self.listen(self.memory.heard)

    def leases_after(self, stamp: int, repo: str) -> list[LeaseRow]:
        """See :meth:`detente.storage.base.LeaseStore.leases_after` (a renewal moves a
        lease row and appends no event: :mod:`detente.storage.sql_leases`)."""
        return lease_rows_after(
            lambda sql, params: self._fetch(POSTGRES.sql(sql), params), stamp, repo
        )

    def _committed(self, event_id: str) -> bool:
        """After a lost COMMIT: wait out the old transaction (it holds the lock), then look."""
        try:
            with self._pooled() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK,))
                found = conn.execute("SELECT 1 FROM events WHERE id = %s", (event_id,))
                return found.fetchone() is not None
        except (StoreError, psycopg.Error):
            return False

    # ------------------------------------------------------------------ time

    def now(self) -> datetime:
        """The database server's clock (``clock_timestamp()``), timezone-aware UTC.

        Inside :meth:`transaction` (same thread) the first reading is the one its start
        took (with the lock at ``BEGIN``, or carried forward from the last reading when it
        started from memory: :mod:`detente.storage.postgres_memory`), later ones are read
        on the transaction's own connection.

        Raises:
            StoreError: ``store_unavailable`` when the database cannot be reached.
        """
        return self.now_and_last()[0]

    def now_and_last(self) -> tuple[datetime, str | None]:
        """``(now(), the at of the newest event)`` in one round trip (the lease clock's
        reading and floor, see :class:`detente.storage.clock.StoreClock`).

        Raises:
            StoreError: ``store_unavailable`` when the database cannot be reached.
        """
        reading: tuple[datetime, Any] | None = getattr(self._local, "reading", None)
        if reading is not None:  # this transaction's start: read at BEGIN, or remembered
            self._local.reading = None
            when, last = reading
        else:
            [(when, last)] = self._fetch(
                "SELECT clock_timestamp(), (SELECT at FROM events ORDER BY seq DESC LIMIT 1)"
            )
            self.memory.saw_clock(when.astimezone(UTC))
        return when.astimezone(UTC), (str(last) if last is not None else None)

    # ------------------------------------------------------------------ wake-ups

    def listen(self, fn: Callable[[int], None]) -> Callable[[], None]:
        """Call ``fn(seq)`` when any server commits (``LISTEN``); returns the unsubscriber.

        ``fn`` runs on a background thread and must not block. Wake-ups are hints: after a
        reconnect ``fn(0)`` is called, since notifications may have been missed meanwhile.
        """
        unlisten = self._listeners.listen(fn)
        with self._start_lock:
            if self._listener_thread is None:
                self._listener_thread = threading.Thread(
                    target=self._listen_loop, name="detente-pg-listen", daemon=True
                )
                self._listener_thread.start()
        return unlisten

    def _listen_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn = self._connect()
            except StoreError as exc:
                self._stop.wait(self.watch_health.failed(exc))
                continue
            try:
                with conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.watch_health.connected()
                    self._listeners.publish(0)
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5):
                            self._listeners.publish(int(note.payload or 0))
            except Exception as exc:  # a dropped connection, or a listener's bug: never die
                self._stop.wait(self.watch_health.failed(exc))

    def close(self) -> None:
        self._stop.set()
        thread = self._listener_thread
        if thread is not None:
            thread.join(timeout=5)
        self._pool.close()
