"""The PostgreSQL backend (``postgresql://user@host:port/db``): several servers, one log.

Every write transaction starts with ``pg_advisory_xact_lock(APPEND_LOCK)``: one lock for
the whole database, not one per repository, held until COMMIT. Why global:

- the log has ONE sequence and ONE hash chain across all repositories: an event's
  ``prev_hash`` is the hash of the event committed just before it, whatever its repo, so
  appends are serial by nature;
- readers follow the log with ``WHERE seq > last_seen``. With a plain ``SEQUENCE`` two
  transactions could take 5 and 6 and commit 6 first; a reader would see 6, move its
  cursor past 5 and never see 5 when it commits late. Under the lock, ``max(seq) + 1``
  is taken after the previous writer committed (READ COMMITTED: every statement after
  the lock sees it), so sequence order *is* commit order and no reader can skip an event;
- the lock is taken before the service catches its projection up (``read_after``), so
  the overlap analysis a command runs is atomic with its claim write across servers.

``UNIQUE (subject, subject_revision)`` is the CAS guarantee behind every expected
revision (and ``seq`` the primary key keeps the chain from forking even if the lock were
bypassed). Projection rows are written in the same transaction. Triggers refuse UPDATE,
DELETE and TRUNCATE of events. ``pg_notify`` in the appending transaction (delivered at
COMMIT) wakes watchers on every server; they then replay from the sequence, so a lost
notification costs latency, never an event. :meth:`PostgresStore.now` is the database's
clock, the lease-time authority shared by every server (see :mod:`detente.storage.clock`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from detente.errors import ConcurrencyError, StoreError
from detente.eventlog.envelope import GENESIS_HASH, StoredEvent, seal
from detente.storage.base import NewEvent, RecordRow

#: The advisory lock key serializing every write transaction ("detente" in ASCII).
APPEND_LOCK = 0x64_65_74_65_6E_74_65
#: Separate key serializing concurrent first-time schema creation by several servers.
SCHEMA_LOCK = APPEND_LOCK + 1
#: ``LISTEN``/``NOTIFY`` channel; the payload is the last committed sequence.
CHANNEL = "detente_events"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq BIGINT PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    version INTEGER NOT NULL,
    repo TEXT NOT NULL,
    subject TEXT NOT NULL,
    subject_revision INTEGER NOT NULL,
    data TEXT NOT NULL,
    at TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    UNIQUE (subject, subject_revision)
);
CREATE INDEX IF NOT EXISTS events_repo_seq ON events (repo, seq);
CREATE TABLE IF NOT EXISTS records (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    repo TEXT NOT NULL,
    revision INTEGER NOT NULL,
    status TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE OR REPLACE FUNCTION detente_append_only() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN RAISE EXCEPTION 'the event log is append-only'; END $$;
CREATE OR REPLACE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
FOR EACH ROW EXECUTE FUNCTION detente_append_only();
CREATE OR REPLACE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
FOR EACH STATEMENT EXECUTE FUNCTION detente_append_only();
INSERT INTO meta (key, value) VALUES ('schema_version', '1') ON CONFLICT DO NOTHING;
"""

_COLUMNS = "seq, id, type, version, repo, subject, subject_revision, data, at, prev_hash, hash"


def _row_to_event(row: Sequence[Any]) -> StoredEvent:
    return StoredEvent(
        seq=int(row[0]),
        id=str(row[1]),
        type=str(row[2]),
        version=int(row[3]),
        repo=str(row[4]),
        subject=str(row[5]),
        subject_revision=int(row[6]),
        data=json.loads(row[7]),
        at=str(row[8]),
        prev_hash=str(row[9]),
        hash=str(row[10]),
    )


class _Pool:
    """A small blocking connection pool (autocommit connections, created lazily)."""

    def __init__(self, conninfo: str, size: int) -> None:
        self._conninfo = conninfo
        self._size = size
        self._idle: list[psycopg.Connection[Any]] = []
        self._open = 0
        self._cond = threading.Condition()
        self._closed = False

    def connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(
                self._conninfo,
                autocommit=True,
                connect_timeout=10,
                keepalives=1,
                keepalives_idle=5,
                keepalives_interval=2,
                keepalives_count=3,
            )
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL: {exc}") from exc

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        with self._cond:
            if self._closed:
                raise StoreError("the PostgreSQL store is closed")
            while not self._idle and self._open >= self._size:
                self._cond.wait()
            conn = self._idle.pop() if self._idle else None
            self._open += conn is None
        if conn is None:
            try:
                conn = self.connect()
            except BaseException:
                with self._cond:
                    self._open -= 1
                    self._cond.notify()
                raise
        try:
            yield conn
        finally:
            with self._cond:
                if conn.broken or conn.closed or self._closed:
                    self._open -= 1
                    conn.close()
                else:
                    self._idle.append(conn)
                self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            for conn in self._idle:
                conn.close()
            self._idle.clear()


class _PgTx:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self.appended: list[StoredEvent] = []

    def read_after(self, seq: int, repo: str) -> list[StoredEvent]:
        cur = self._conn.execute(
            f"SELECT {_COLUMNS} FROM events WHERE repo = %s AND seq > %s ORDER BY seq",
            (repo, seq),
        )
        return [_row_to_event(r) for r in cur.fetchall()]

    def _revision(self, subject: str) -> int:
        row = self._conn.execute(
            "SELECT COALESCE(MAX(subject_revision), 0) FROM events WHERE subject = %s",
            (subject,),
        ).fetchone()
        return int(row[0]) if row else 0

    def append(self, events: Sequence[NewEvent], expected: Mapping[str, int]) -> list[StoredEvent]:
        for subject, want in expected.items():
            have = self._revision(subject)
            if have != want:
                raise ConcurrencyError(
                    f"stream {subject} is at revision {have}, expected {want}",
                    subject=subject,
                    expected=want,
                    actual=have,
                )
        last = self._conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1")
        head = last.fetchone()
        seq, prev = (int(head[0]), str(head[1])) if head else (0, GENESIS_HASH)
        revisions: dict[str, int] = {}
        out: list[StoredEvent] = []
        for event in events:
            if event.subject not in revisions:
                revisions[event.subject] = self._revision(event.subject)
            revisions[event.subject] += 1
            seq += 1
            out.append(
                seal(
                    seq=seq,
                    prev_hash=prev,
                    id=event.id,
                    type=event.type,
                    version=event.version,
                    repo=event.repo,
                    subject=event.subject,
                    subject_revision=revisions[event.subject],
                    data=event.data,
                    at=event.at,
                )
            )
            prev = out[-1].hash
        try:
            with self._conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO events ({_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    [
                        (
                            e.seq,
                            e.id,
                            e.type,
                            e.version,
                            e.repo,
                            e.subject,
                            e.subject_revision,
                            json.dumps(e.data, sort_keys=True, ensure_ascii=False),
                            e.at,
                            e.prev_hash,
                            e.hash,
                        )
                        for e in out
                    ],
                )
        except pg_errors.UniqueViolation as exc:
            raise ConcurrencyError(f"append lost a race: {exc.diag.message_primary}") from exc
        self.appended.extend(out)
        return out

    def upsert_records(self, rows: Sequence[RecordRow]) -> None:
        if not rows:
            return
        with self._conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO records (kind, id, repo, revision, status, body) "
                "VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT (kind, id) DO UPDATE SET "
                "repo = excluded.repo, revision = excluded.revision, "
                "status = excluded.status, body = excluded.body",
                [
                    (r.kind, r.id, r.repo, r.revision, r.status, json.dumps(r.body, sort_keys=True))
                    for r in rows
                ],
            )


class PostgresStore:
    """One PostgreSQL database shared by any number of detente servers.

    Args:
        url: a libpq URL, ``postgresql://user:password@host:port/dbname?...``.
        pool_size: connections kept per store (commands, readers and watchers share them).

    Raises:
        StoreError: ``store_unavailable`` when the database cannot be reached or migrated.
    """

    def __init__(self, url: str, *, pool_size: int = 8) -> None:
        self.url = url
        self._pool = _Pool(url, pool_size)
        self._listeners: dict[int, Callable[[int], None]] = {}
        self._listen_lock = threading.Lock()
        self._listener_thread: threading.Thread | None = None
        self._stop = threading.Event()
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                conn.execute(_SCHEMA)
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the PostgreSQL store: {exc}") from exc

    @contextmanager
    def transaction(self, repo: str) -> Iterator[_PgTx]:
        """A write transaction holding the global append lock (see the module docstring).

        Raises:
            ConcurrencyError: ``store_concurrency`` when an expected revision lost a race.
            StoreError: ``store_unavailable`` when the database fails; after a connection
                loss during COMMIT the outcome is checked, so a committed command is
                never reported as failed.
        """
        with self._pool.connection() as conn:
            tx = _PgTx(conn)
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK,))
                    yield tx
                    if tx.appended:
                        conn.execute(
                            "SELECT pg_notify(%s, %s)", (CHANNEL, str(tx.appended[-1].seq))
                        )
            except psycopg.OperationalError as exc:
                if tx.appended and self._committed(tx.appended[0].id):
                    return
                raise StoreError(f"PostgreSQL transaction failed: {exc}") from exc
            except psycopg.Error as exc:
                raise StoreError(f"PostgreSQL transaction failed: {exc}") from exc

    def _committed(self, event_id: str) -> bool:
        """After a lost COMMIT: wait out the old transaction (it holds the lock), then look."""
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK,))
                found = conn.execute("SELECT 1 FROM events WHERE id = %s", (event_id,))
                return found.fetchone() is not None
        except psycopg.Error:
            return False

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            with self._pool.connection() as conn:
                return conn.execute(sql, params).fetchall()
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL read failed: {exc}") from exc

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]:
        query = f"SELECT {_COLUMNS} FROM events WHERE seq > %s"
        params: list[Any] = [since]
        if repo is not None:
            query += " AND repo = %s"
            params.append(repo)
        params.append(max(limit, 0))
        return [_row_to_event(r) for r in self._query(query + " ORDER BY seq LIMIT %s", params)]

    def iter_all(self, *, batch: int = 1000) -> Iterator[StoredEvent]:
        since = 0
        while chunk := self.read(since=since, limit=batch):
            yield from chunk
            since = chunk[-1].seq

    def head(self) -> tuple[int, str]:
        rows = self._query("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1")
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, GENESIS_HASH)

    def records(self, kind: str, repo: str | None = None) -> list[RecordRow]:
        query = "SELECT kind, id, repo, revision, status, body FROM records WHERE kind = %s"
        params: list[Any] = [kind]
        if repo is not None:
            query += " AND repo = %s"
            params.append(repo)
        return [
            RecordRow(r[0], r[1], r[2], int(r[3]), r[4], json.loads(r[5]))
            for r in self._query(query + " ORDER BY id", params)
        ]

    def now(self) -> datetime:
        """The database server's clock (``clock_timestamp()``), timezone-aware UTC.

        Raises:
            StoreError: ``store_unavailable`` when the database cannot be reached.
        """
        [(when,)] = self._query("SELECT clock_timestamp()")
        return when.astimezone(UTC)  # type: ignore[no-any-return]

    def listen(self, fn: Callable[[int], None]) -> Callable[[], None]:
        """Call ``fn(seq)`` when any server commits (``LISTEN``); returns the unsubscriber.

        ``fn`` runs on a background thread and must not block. Wake-ups are hints: after a
        reconnect ``fn(0)`` is called, since notifications may have been missed meanwhile.
        """
        with self._listen_lock:
            key = max(self._listeners, default=0) + 1
            self._listeners[key] = fn
            if self._listener_thread is None:
                self._listener_thread = threading.Thread(
                    target=self._listen_loop, name="detente-pg-listen", daemon=True
                )
                self._listener_thread.start()

        def unlisten() -> None:
            with self._listen_lock:
                self._listeners.pop(key, None)

        return unlisten

    def _notify(self, seq: int) -> None:
        with self._listen_lock:
            listeners = list(self._listeners.values())
        for fn in listeners:
            fn(seq)

    def _listen_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn = self._pool.connect()
            except StoreError:
                self._stop.wait(1.0)
                continue
            try:
                with conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._notify(0)
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5):
                            self._notify(int(note.payload or 0))
            except psycopg.Error:
                self._stop.wait(0.5)

    def close(self) -> None:
        self._stop.set()
        thread = self._listener_thread
        if thread is not None:
            thread.join(timeout=5)
        self._pool.close()
