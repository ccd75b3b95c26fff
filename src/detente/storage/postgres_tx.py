"""A PostgreSQL write transaction in three round trips, whatever the batch size.

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
2. :data:`WRITE`: one statement checks the base revisions the appends were trusted with
   (a ``SELECT`` in a CTE, which sees the table as it was before the statement's own
   inserts), inserts every event and upserts every projection row (``json_to_recordset``
   over one JSON document per table: one fixed text, prepared by psycopg after a few
   uses, whatever the number of rows). A wrong base revision comes back as rows that
   differ and the caller rolls back; a duplicate ``(subject, subject_revision)`` fails
   the statement (a race);
3. ``pg_notify`` and ``COMMIT`` in one string (:func:`commit_sql`; the payload is an
   integer, so no quoting question arises).

The approach is the usual one for batch inserts from a client (PostgreSQL documents
``json_to_recordset`` in its JSON-functions chapter; data-modifying ``WITH`` in its
"WITH Queries" chapter).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from detente.errors import ConcurrencyError
from detente.eventlog.envelope import StoredEvent
from detente.eventlog.records import RecordRow
from detente.storage import rowjson
from detente.storage.append import check_expected
from detente.storage.sql import Dialect, SqlTx, event_params, record_params

__all__ = ["BEGIN_LOCKED", "WRITE", "PgTx", "begin_sql", "commit_sql", "write_params"]

#: Its last statement answers ``(clock_timestamp(), head seq, head hash, head at)``
#: (the head columns are NULL on an empty log). ``{lock}`` is the advisory lock key.
BEGIN_LOCKED = (
    "BEGIN; SELECT pg_advisory_xact_lock({lock}); "
    "SELECT clock_timestamp(), h.seq, h.hash, h.at FROM (SELECT 1) AS one "
    "LEFT JOIN (SELECT seq, hash, at FROM events ORDER BY seq DESC LIMIT 1) AS h ON true"
)

#: One statement: base revisions of the trusted subjects (the answer), events, records.
#: Parameters: the trusted subjects (a binary ``text[]``), then the events and the
#: records, each one JSON array of objects (see :func:`write_params`).
WRITE = """
WITH base AS (
    SELECT subject, MAX(subject_revision) AS revision FROM events
    WHERE subject = ANY(%b::text[]) GROUP BY subject
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
SELECT subject, revision FROM base
"""

_EVENT_KEYS = (
    *("seq", "id", "type", "version", "repo", "subject", "subject_revision", "data"),
    *("at", "prev_hash", "hash"),
)
_RECORD_KEYS = ("kind", "id", "repo", "revision", "status", "body")


def write_params(
    trusted: Sequence[str], events: Sequence[StoredEvent], rows: Sequence[RecordRow]
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
    return [list(trusted), rowjson.dumps_text(events_json), rowjson.dumps_text(rows_json)]


def begin_sql(lock: int) -> str:
    """:data:`BEGIN_LOCKED` for advisory lock key ``lock``."""
    return BEGIN_LOCKED.format(lock=int(lock))


def commit_sql(channel: str, seq: int | None) -> str:
    """``COMMIT``, preceded by ``pg_notify(channel, seq)`` when ``seq`` is given.

    ``channel`` is a constant of the store (an identifier without quotes); ``seq`` is
    formatted as an integer.
    """
    if seq is None:
        return "COMMIT"
    return f"SELECT pg_notify('{channel}', '{int(seq)}'); COMMIT"


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

    def flush(self) -> None:
        """Check the trusted base revisions and write the events and rows, in one
        statement (call once, before COMMIT).

        Raises:
            ConcurrencyError: ``store_concurrency`` when a stream is not at the revision
                an append expected, or an insert lost a race (roll back: the statement
                may have written).
        """
        trusted = sorted(self._trusted)
        events = self.appended[self._flushed :]
        if not trusted and not events and not self._rows:
            return
        params = write_params(trusted, events, list(self._rows.values()))
        try:
            found = self._query(WRITE, params)
        except self._dialect.races as exc:
            raise ConcurrencyError(f"append lost a race: {exc}") from exc
        have = {str(r[0]): int(r[1]) for r in found}
        check_expected({s: self._base[s] for s in trusted}, lambda s: have.get(s, 0))
        self._trusted.clear()
        self._flushed = len(self.appended)
        self._rows.clear()
