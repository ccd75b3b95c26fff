"""A PostgreSQL write transaction in two round trips, whatever the batch size.

A group-committed batch (:mod:`detente.service.group_commit`) on PostgreSQL used to pay
about ten round trips: ``BEGIN``, the advisory lock, the clock, the catch-up read, the
chain head, the base-revision check, two ``executemany`` and ``pg_notify`` before the
``COMMIT``. Each is a wake-up of the server process and of this one, which on a loaded
machine costs far more than the work. Here a transaction is:

1. :data:`BEGIN_LOCKED`: ``BEGIN``, ``pg_advisory_xact_lock`` and one ``SELECT`` of the
   database clock and the chain head, sent as one simple-protocol string. Under READ
   COMMITTED each statement of the string takes its own snapshot, so the head is read
   *after* the lock was granted (what the sequence-equals-commit-order argument of
   :mod:`detente.storage.postgres` needs). With the head known, catching up when nothing
   was committed elsewhere needs no query at all;
2. :data:`WRITE`, ``pg_notify`` and ``COMMIT``, pipelined (psycopg's pipeline mode: sent
   together, answered together). The one statement checks the base revisions the
   appends were trusted with (a ``SELECT`` in a CTE, which sees the table as it was
   before the statement's own inserts), inserts every event and upserts every projection
   row (``json_to_recordset`` over one JSON document per table: one fixed text, prepared
   by psycopg after a few uses, whatever the number of rows). A wrong base revision
   raises (:data:`STALE_STREAM_FUNCTION`) and a duplicate ``(subject,
   subject_revision)`` fails the statement (a race); either way the server skips the
   ``COMMIT`` queued behind it and the caller rolls back.

The approach is the usual one for batch inserts from a client (PostgreSQL documents
``json_to_recordset`` in its JSON-functions chapter, data-modifying ``WITH`` in its
"WITH Queries" chapter, and pipelining in libpq's "Pipeline Mode").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from psycopg import errors as pg_errors

from detente.errors import ConcurrencyError
from detente.eventlog.envelope import StoredEvent
from detente.eventlog.records import RecordRow
from detente.storage import rowjson
from detente.storage.sql import Dialect, SqlTx, event_params, record_params

__all__ = [
    "BEGIN_LOCKED",
    "STALE_STREAM_FUNCTION",
    "WRITE",
    "PgTx",
    "begin_sql",
    "lost_race",
    "write_params",
]

#: Its last statement answers ``(clock_timestamp(), head seq, head hash, head at)``
#: (the head columns are NULL on an empty log). ``{lock}`` is the advisory lock key.
BEGIN_LOCKED = (
    "BEGIN; SELECT pg_advisory_xact_lock({lock}); "
    "SELECT clock_timestamp(), h.seq, h.hash, h.at FROM (SELECT 1) AS one "
    "LEFT JOIN (SELECT seq, hash, at FROM events ORDER BY seq DESC LIMIT 1) AS h ON true"
)

#: Raises ``serialization_failure`` naming a stream and both revisions (called by
#: :data:`WRITE` for a stream that is not at the revision an append expected, so the
#: statement, and the ``COMMIT`` pipelined after it, fail).
STALE_STREAM_FUNCTION = """
CREATE OR REPLACE FUNCTION detente_stale_stream(subject text, have bigint, want bigint)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'stream % is at revision %, expected %', subject, have, want
        USING ERRCODE = 'serialization_failure';
END $$;
"""

#: One statement: check the trusted base revisions (failing the statement on a wrong
#: one), insert the events, upsert the records. Parameters: the trusted subjects and
#: their expected revisions (binary ``text[]`` and ``int[]``), then the events and the
#: records, each one JSON array of objects (see :func:`write_params`). Answers no rows.
WRITE = """
WITH want AS (
    SELECT * FROM unnest(%b::text[], %b::bigint[]) AS w(subject, revision)
), base AS (
    SELECT subject, MAX(subject_revision) AS revision FROM events
    WHERE subject IN (SELECT subject FROM want) GROUP BY subject
), appended AS (
    INSERT INTO events
        (seq, id, type, version, repo, subject, subject_revision, data, at, prev_hash, hash)
    SELECT * FROM json_to_recordset(%s::json) AS e(seq bigint, id text, type text,
        version int, repo text, subject text, subject_revision int, data text, at text,
        prev_hash text, hash text)
), upserted AS (
    INSERT INTO records (kind, id, repo, revision, status, body)
    SELECT * FROM json_to_recordset(%s::json) AS r(kind text, id text, repo text,
        revision int, status text, body text)
    ON CONFLICT (kind, id) DO UPDATE SET repo = excluded.repo,
        revision = excluded.revision, status = excluded.status, body = excluded.body
)
SELECT detente_stale_stream(w.subject, COALESCE(b.revision, 0), w.revision)
FROM want AS w LEFT JOIN base AS b USING (subject)
WHERE COALESCE(b.revision, 0) <> w.revision
"""

_EVENT_KEYS = (
    *("seq", "id", "type", "version", "repo", "subject", "subject_revision", "data"),
    *("at", "prev_hash", "hash"),
)
_RECORD_KEYS = ("kind", "id", "repo", "revision", "status", "body")


def write_params(
    trusted: Mapping[str, int], events: Sequence[StoredEvent], rows: Sequence[RecordRow]
) -> list[Any]:
    """The parameters of :data:`WRITE`.

    The rows travel as one JSON document per table (encoded by orjson, unpacked by
    PostgreSQL's ``json_to_recordset``) rather than one array per column: psycopg adapts
    each array element in Python, which for a batch of N commands cost about 18 array
    adaptations plus N escaped JSON strings per column, several times the rest of the
    write. The event payloads and record bodies stay JSON *text* inside the document.
    """
    events_json = [dict(zip(_EVENT_KEYS, event_params(e), strict=True)) for e in events]
    rows_json = [dict(zip(_RECORD_KEYS, record_params(r), strict=True)) for r in rows]
    subjects = sorted(trusted)
    return [
        subjects,
        [trusted[s] for s in subjects],
        rowjson.dumps_text(events_json),
        rowjson.dumps_text(rows_json),
    ]


def begin_sql(lock: int) -> str:
    """:data:`BEGIN_LOCKED` for advisory lock key ``lock``."""
    return BEGIN_LOCKED.format(lock=int(lock))


#: Runs one statement with parameters and returns its rows.
Query = Callable[[str, Sequence[Any]], list[Any]]


class PgTx(SqlTx):
    """:class:`~detente.storage.sql.SqlTx` with the head read at ``BEGIN`` and one write.

    Args:
        dialect: the PostgreSQL dialect.
        fetch: runs a statement on the transaction's connection and returns its rows.
        head: ``(seq, hash)`` of the log read under the lock at ``BEGIN``.
    """

    def __init__(self, dialect: Dialect, fetch: Query, head: tuple[int, str]) -> None:
        super().__init__(dialect, fetch, self._no_execute_many)
        self._query = fetch
        self._head = head

    @staticmethod
    def _no_execute_many(sql: str, rows: list[tuple[Any, ...]]) -> None:
        raise RuntimeError("PgTx writes in flush() only")  # pragma: no cover

    def read_after(self, seq: int, repo: str) -> list[StoredEvent]:
        """See :meth:`detente.storage.base.StoreTx.read_after`: no query when ``seq`` is
        already the head (nobody committed since the caller last looked)."""
        if seq >= self._head[0]:
            return []
        return super().read_after(seq, repo)

    def _current_head(self) -> tuple[int, str]:
        if self.appended:
            return (self.appended[-1].seq, self.appended[-1].hash)
        return self._head

    def write(self) -> list[Any] | None:
        """The parameters of :data:`WRITE` for everything not written yet (None: nothing
        to write); marks it written. The caller sends the statement, then ``COMMIT``, in
        one round trip (:meth:`detente.storage.postgres.PostgresStore.transaction`): a
        wrong base revision or a lost insert race fails the statement and with it the
        ``COMMIT`` (see :func:`lost_race`)."""
        trusted = {s: self._base[s] for s in self._trusted}
        events = self.appended[self._flushed :]
        if not trusted and not events and not self._rows:
            return None
        params = write_params(trusted, events, list(self._rows.values()))
        self._trusted.clear()
        self._flushed = len(self.appended)
        self._rows.clear()
        return params

    def flush(self) -> None:  # pragma: no cover - the store pipelines write() instead
        raise RuntimeError("PgTx is written by PostgresStore.transaction (write())")


def lost_race(exc: BaseException) -> ConcurrencyError | None:
    """The :class:`~detente.errors.ConcurrencyError` a failed :data:`WRITE` stands for:
    a stream not at its expected revision (``serialization_failure``, raised by
    :data:`STALE_STREAM_FUNCTION`) or a duplicate ``(subject, subject_revision)`` or
    sequence (another writer appended first); None for any other failure."""
    if isinstance(exc, pg_errors.SerializationFailure):
        return ConcurrencyError(exc.diag.message_primary or str(exc))
    if isinstance(exc, pg_errors.UniqueViolation):
        return ConcurrencyError(f"append lost a race: {exc}")
    return None
