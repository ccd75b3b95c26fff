"""The embedded SQLite backend (``sqlite:///path``), the default store.

WAL journal, ``synchronous=FULL`` (a commit acknowledged to a client survives kill -9
and power loss), and ``BEGIN IMMEDIATE`` for every write transaction so that writers
from several processes (several CLIs, a server, git hooks) serialize on the database
file. Sequence numbers are assigned inside that transaction as ``max(seq) + 1``, so the
global sequence is the commit order. Triggers refuse any UPDATE or DELETE of an event:
the log is append-only at the storage level too. ``UNIQUE(subject, subject_revision)``
is the CAS guarantee behind every expected revision.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from detente.errors import ConcurrencyError, StoreError
from detente.eventlog.envelope import GENESIS_HASH, StoredEvent, seal
from detente.storage.base import NewEvent, RecordRow

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
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
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
"""

SCHEMA_VERSION = "1"


def _row_to_event(row: sqlite3.Row | tuple[Any, ...]) -> StoredEvent:
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


_COLUMNS = "seq, id, type, version, repo, subject, subject_revision, data, at, prev_hash, hash"


class _SqliteTx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def read_after(self, seq: int, repo: str) -> list[StoredEvent]:
        cur = self._conn.execute(
            f"SELECT {_COLUMNS} FROM events WHERE repo = ? AND seq > ? ORDER BY seq", (repo, seq)
        )
        return [_row_to_event(r) for r in cur.fetchall()]

    def append(self, events: Sequence[NewEvent], expected: Mapping[str, int]) -> list[StoredEvent]:
        for subject, want in expected.items():
            (have,) = self._conn.execute(
                "SELECT COALESCE(MAX(subject_revision), 0) FROM events WHERE subject = ?",
                (subject,),
            ).fetchone()
            if have != want:
                raise ConcurrencyError(
                    f"stream {subject} is at revision {have}, expected {want}",
                    subject=subject,
                    expected=want,
                    actual=have,
                )
        last = self._conn.execute(
            "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        seq, prev = (int(last[0]), str(last[1])) if last else (0, GENESIS_HASH)
        revisions: dict[str, int] = {}
        out: list[StoredEvent] = []
        for event in events:
            if event.subject not in revisions:
                revisions[event.subject] = int(
                    self._conn.execute(
                        "SELECT COALESCE(MAX(subject_revision), 0) FROM events WHERE subject = ?",
                        (event.subject,),
                    ).fetchone()[0]
                )
            revisions[event.subject] += 1
            seq += 1
            stored = seal(
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
            try:
                self._conn.execute(
                    f"INSERT INTO events ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        stored.seq,
                        stored.id,
                        stored.type,
                        stored.version,
                        stored.repo,
                        stored.subject,
                        stored.subject_revision,
                        json.dumps(stored.data, sort_keys=True, ensure_ascii=False),
                        stored.at,
                        stored.prev_hash,
                        stored.hash,
                    ),
                )
            except sqlite3.IntegrityError as exc:
                raise ConcurrencyError(f"append to {event.subject} lost a race: {exc}") from exc
            prev = stored.hash
            out.append(stored)
        return out

    def upsert_records(self, rows: Sequence[RecordRow]) -> None:
        self._conn.executemany(
            "INSERT INTO records (kind, id, repo, revision, status, body) VALUES (?,?,?,?,?,?) "
            "ON CONFLICT (kind, id) DO UPDATE SET repo = excluded.repo, "
            "revision = excluded.revision, status = excluded.status, body = excluded.body",
            [
                (r.kind, r.id, r.repo, r.revision, r.status, json.dumps(r.body, sort_keys=True))
                for r in rows
            ],
        )


class SqliteStore:
    """A SQLite file shared by every process of one repository.

    Args:
        path: database file; its directory is created if missing.
        busy_timeout: seconds a writer waits for another process's transaction.

    Raises:
        StoreError: ``store_unavailable`` when the file cannot be opened or migrated.
    """

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
            self._conn.executescript(_SCHEMA)
            self._conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                (SCHEMA_VERSION,),
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the SQLite store at {self.path}: {exc}") from exc

    @contextmanager
    def transaction(self, repo: str) -> Iterator[_SqliteTx]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"the SQLite store is busy or unavailable: {exc}") from exc
            try:
                yield _SqliteTx(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._conn.execute("ROLLBACK")
                raise StoreError(f"commit failed: {exc}") from exc

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]:
        query = f"SELECT {_COLUMNS} FROM events WHERE seq > ?"
        params: list[Any] = [since]
        if repo is not None:
            query += " AND repo = ?"
            params.append(repo)
        query += " ORDER BY seq LIMIT ?"
        params.append(max(limit, 0))
        with self._lock:
            return [_row_to_event(r) for r in self._conn.execute(query, params).fetchall()]

    def iter_all(self, *, batch: int = 1000) -> Iterator[StoredEvent]:
        since = 0
        while True:
            chunk = self.read(since=since, limit=batch)
            if not chunk:
                return
            yield from chunk
            since = chunk[-1].seq

    def head(self) -> tuple[int, str]:
        with self._lock:
            row = self._conn.execute(
                "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"
            ).fetchone()
        return (int(row[0]), str(row[1])) if row else (0, GENESIS_HASH)

    def records(self, kind: str, repo: str | None = None) -> list[RecordRow]:
        query = "SELECT kind, id, repo, revision, status, body FROM records WHERE kind = ?"
        params: list[Any] = [kind]
        if repo is not None:
            query += " AND repo = ?"
            params.append(repo)
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY id", params).fetchall()
        return [
            RecordRow(
                kind=r[0],
                id=r[1],
                repo=r[2],
                revision=int(r[3]),
                status=r[4],
                body=json.loads(r[5]),
            )
            for r in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
