"""What the SQL stores share: one schema, one set of statements, one transaction class.

SQLite and PostgreSQL agree on everything detente asks of SQL except three things, which
a :class:`Dialect` names: the parameter marker (``?`` / ``%s``), the type of the global
sequence column and the triggers that keep the log append-only. Every statement below is
written once with ``?`` markers and spelled for the dialect by :meth:`Dialect.sql`.

Tables: ``events`` (the hash-chained log; ``UNIQUE (subject, subject_revision)`` is the
CAS guarantee behind every expected revision), ``records`` (projection rows, written in
the same transaction as the events that produced them), ``meta`` (schema version) and
``snapshots`` (one projection snapshot per repository, a verified cache:
:mod:`detente.storage.sql_snapshots`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from detente.errors import ConcurrencyError
from detente.eventlog.envelope import GENESIS_HASH, NewEvent, StoredEvent
from detente.eventlog.records import LeaseRow, RecordRow
from detente.storage import rowjson
from detente.storage.append import check_expected, seal_appends
from detente.storage.base import PagedReads
from detente.storage.sql_leases import LEASE_TABLES, SqlLeaseWrites, lease_rows_after

SCHEMA_VERSION = "1"

_TABLES = """
CREATE TABLE IF NOT EXISTS events (
    seq {seq_type} PRIMARY KEY,
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
CREATE TABLE IF NOT EXISTS snapshots (
    repo TEXT PRIMARY KEY,
    seq {seq_type} NOT NULL,
    hash TEXT NOT NULL,
    version TEXT NOT NULL,
    digest TEXT NOT NULL,
    body {blob_type} NOT NULL
);
"""

_COLUMNS = "seq, id, type, version, repo, subject, subject_revision, data, at, prev_hash, hash"
_INSERT_EVENT = f"INSERT INTO events ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
_STREAM_REVISION = "SELECT COALESCE(MAX(subject_revision), 0) FROM events WHERE subject = ?"
_HEAD = "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"
_UPSERT_RECORD = (
    "INSERT INTO records (kind, id, repo, revision, status, body) VALUES (?,?,?,?,?,?) "
    "ON CONFLICT (kind, id) DO UPDATE SET repo = excluded.repo, "
    "revision = excluded.revision, status = excluded.status, body = excluded.body"
)
#: Records the schema version once (both dialects know ``ON CONFLICT DO NOTHING``).
SCHEMA_MARK = (
    f"INSERT INTO meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}') "
    "ON CONFLICT DO NOTHING"
)

#: Runs one SELECT: ``(sql, params) -> rows``.
Fetch = Callable[[str, Sequence[Any]], list[Any]]
#: Runs one statement for each parameter tuple.
ExecuteMany = Callable[[str, list[tuple[Any, ...]]], None]


@dataclass(frozen=True)
class Dialect:
    """Where SQLite and PostgreSQL differ.

    Attributes:
        param: the parameter marker (``?`` or ``%s``).
        seq_type: the column type of the global sequence.
        append_only: statements creating the triggers that refuse UPDATE/DELETE of events.
        races: the driver's exceptions for a violated UNIQUE constraint (a lost race).
        blob_type: the column type of binary data (projection snapshots).
    """

    param: str
    seq_type: str
    append_only: str
    races: tuple[type[Exception], ...]
    blob_type: str = "BLOB"

    def sql(self, text: str) -> str:
        """``text`` (written with ``?`` markers) in this dialect."""
        return text if self.param == "?" else text.replace("?", self.param)

    def schema(self) -> str:
        """Every statement creating the schema (idempotent)."""
        tables = _TABLES.format(seq_type=self.seq_type, blob_type=self.blob_type)
        return tables + LEASE_TABLES + self.append_only


def row_to_event(row: Sequence[Any]) -> StoredEvent:
    """A stored event from a row of :data:`_COLUMNS`."""
    return StoredEvent(
        seq=int(row[0]),
        id=str(row[1]),
        type=str(row[2]),
        version=int(row[3]),
        repo=str(row[4]),
        subject=str(row[5]),
        subject_revision=int(row[6]),
        data=rowjson.loads(row[7]),
        at=str(row[8]),
        prev_hash=str(row[9]),
        hash=str(row[10]),
    )


def event_params(e: StoredEvent) -> tuple[Any, ...]:
    """The :data:`_COLUMNS` values of ``e`` (``data`` as JSON text)."""
    data = rowjson.dumps_text(e.data)
    head = (e.seq, e.id, e.type, e.version, e.repo, e.subject, e.subject_revision)
    return (*head, data, e.at, e.prev_hash, e.hash)


def record_params(r: RecordRow) -> tuple[Any, ...]:
    """``(kind, id, repo, revision, status, body as JSON text)`` of ``r``."""
    return (r.kind, r.id, r.repo, r.revision, r.status, rowjson.dumps_text(r.body))


class SqlTx:
    """One write transaction on a SQL store (the caller began it, holds the store's write
    lock, calls :meth:`flush` and commits).

    Appends are sealed at once (sequence, stream revision, hash chain) and written by
    :meth:`flush` in three statements whatever the number of commands: one query checks
    every touched stream's base revision (the caller's expected one, taken on trust until
    then), one ``executemany`` inserts the events and one upserts the projection rows. A
    group-committed batch of N commands costs three round trips, not 5 N.

    Args:
        dialect: the store's SQL dialect.
        fetch: runs a SELECT on the transaction's connection.
        execute_many: runs a write statement on the transaction's connection.
    """

    def __init__(
        self,
        dialect: Dialect,
        fetch: Fetch,
        execute_many: ExecuteMany,
        *,
        lease_stamp: int | None = None,
    ) -> None:
        self._dialect = dialect
        self._fetch = fetch
        self._execute_many = execute_many
        #: The events sealed in this transaction, in order (written by :meth:`flush`).
        self.appended: list[StoredEvent] = []
        self._base: dict[str, int] = {}  # subject -> revision before this transaction
        self._trusted: set[str] = set()  # bases taken from an expected revision, unread
        self._revisions: dict[str, int] = {}  # subject -> revision after the appends
        self._rows: dict[tuple[str, str], RecordRow] = {}
        self._flushed = 0
        self._leases = SqlLeaseWrites(
            lambda sql, params: fetch(dialect.sql(sql), params),
            lambda sql, rows: execute_many(dialect.sql(sql), rows),
            stamp=lease_stamp,
        )

    def leases_after(self, stamp: int, repo: str) -> list[LeaseRow]:
        """See :meth:`detente.storage.base.LeaseTx.leases_after`."""
        return lease_rows_after(
            lambda sql, params: self._fetch(self._dialect.sql(sql), params), stamp, repo
        )

    def write_leases(self, rows: Sequence[LeaseRow]) -> list[LeaseRow]:
        """See :meth:`detente.storage.base.LeaseTx.write_leases` (written by :meth:`flush`)."""
        return self._leases.write(rows)

    def read_after(self, seq: int, repo: str) -> list[StoredEvent]:
        """See :meth:`detente.storage.base.StoreTx.read_after` (committed events only)."""
        query = f"SELECT {_COLUMNS} FROM events WHERE repo = ? AND seq > ? ORDER BY seq"
        return [row_to_event(r) for r in self._fetch(self._dialect.sql(query), (repo, seq))]

    def _revision(self, subject: str) -> int:
        if subject in self._revisions:
            return self._revisions[subject]
        if subject not in self._base:
            rows = self._fetch(self._dialect.sql(_STREAM_REVISION), (subject,))
            self._base[subject] = int(rows[0][0]) if rows else 0
        return self._base[subject]

    def append(self, events: Sequence[NewEvent], expected: Mapping[str, int]) -> list[StoredEvent]:
        """See :meth:`detente.storage.base.StoreTx.append`; a wrong expected revision of a
        stream this transaction has not read yet raises at :meth:`flush`."""
        head = self._current_head()
        for subject, want in expected.items():
            if subject not in self._base and subject not in self._revisions:
                self._base[subject] = want
                self._trusted.add(subject)
        out = seal_appends(events, expected, head=head, revision_of=self._revision)
        for event in out:
            self._revisions[event.subject] = event.subject_revision
        self.appended.extend(out)
        return out

    def _current_head(self) -> tuple[int, str]:
        """``(seq, hash)`` the next append follows."""
        if self.appended:  # this transaction holds the lock: its last append is the head
            return (self.appended[-1].seq, self.appended[-1].hash)
        rows = self._fetch(_HEAD, ())
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, GENESIS_HASH)

    def upsert_records(self, rows: Sequence[RecordRow]) -> None:
        """See :meth:`detente.storage.base.StoreTx.upsert_records` (written by :meth:`flush`)."""
        for row in rows:
            self._rows[(row.kind, row.id)] = row

    def flush(self) -> None:
        """Check the trusted base revisions, then write the events and rows (call once,
        before COMMIT).

        Raises:
            ConcurrencyError: ``store_concurrency`` when a stream is not at the revision
                an append expected, or an insert lost a race (nothing is written).
        """
        trusted = sorted(self._trusted)
        for start in range(0, len(trusted), 500):
            chunk = trusted[start : start + 500]
            # One index step per subject (a MAX in a correlated subquery); a GROUP BY over
            # ``subject IN (...)`` read every earlier revision of each stream, so a
            # claim's renewal cost grew with the renewals before it.
            marks = ",".join(["(?)"] * len(chunk))
            query = (
                "SELECT w.column1, (SELECT MAX(e.subject_revision) FROM events AS e "
                f"WHERE e.subject = w.column1) FROM (VALUES {marks}) AS w"
            )
            rows = self._fetch(self._dialect.sql(query), chunk)
            current = {str(r[0]): int(r[1] or 0) for r in rows}
            check_expected({s: self._base[s] for s in chunk}, current.__getitem__)
        self._trusted.clear()
        events = self.appended[self._flushed :]
        if events:
            try:
                self._execute_many(
                    self._dialect.sql(_INSERT_EVENT), [event_params(e) for e in events]
                )
            except self._dialect.races as exc:
                raise ConcurrencyError(f"append lost a race: {exc}") from exc
            self._flushed = len(self.appended)
        self._leases.flush()
        if self._rows:
            rows = [record_params(r) for r in self._rows.values()]
            self._execute_many(self._dialect.sql(_UPSERT_RECORD), rows)
            self._rows.clear()


class SqlReads(PagedReads):
    """The reads of a SQL store, on top of its :meth:`_fetch` (one pooled or locked query)."""

    dialect: Dialect

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]:
        """See :meth:`detente.storage.base.Store.read`."""
        query = f"SELECT {_COLUMNS} FROM events WHERE seq > ?"
        params: list[Any] = [since]
        if repo is not None:
            query += " AND repo = ?"
            params.append(repo)
        params.append(max(limit, 0))
        rows = self._fetch(self.dialect.sql(query + " ORDER BY seq LIMIT ?"), params)
        return [row_to_event(r) for r in rows]

    def head(self) -> tuple[int, str]:
        """See :meth:`detente.storage.base.Store.head`."""
        rows = self._fetch(_HEAD)
        return (int(rows[0][0]), str(rows[0][1])) if rows else (0, GENESIS_HASH)

    def last_time(self) -> str | None:
        """The ``at`` of the newest event (the floor of lease time), if any."""
        rows = self._fetch("SELECT at FROM events ORDER BY seq DESC LIMIT 1")
        return str(rows[0][0]) if rows else None

    def records(self, kind: str, repo: str | None = None) -> list[RecordRow]:
        """See :meth:`detente.storage.base.Store.records`."""
        query = "SELECT kind, id, repo, revision, status, body FROM records WHERE kind = ?"
        params: list[Any] = [kind]
        if repo is not None:
            query += " AND repo = ?"
            params.append(repo)
        rows = self._fetch(self.dialect.sql(query + " ORDER BY id"), params)
        return [RecordRow(r[0], r[1], r[2], int(r[3]), r[4], rowjson.loads(r[5])) for r in rows]
