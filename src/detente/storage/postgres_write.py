"""The one write of a PostgreSQL transaction: the ``detente_commit`` function created at
schema setup (:data:`COMMIT_FUNCTION`), its call (:data:`WRITE`) and its parameters
(:func:`write_params`).

Both paths of :mod:`detente.storage.postgres_tx` end in this call: from memory as one
autocommitted statement, locked pipelined with the ``COMMIT``. The function checks the
head and the base revisions, inserts every event and upserts every projection row and
lease row from one JSON document per table (``json_to_recordset``, documented in
PostgreSQL's JSON-functions chapter; the snapshot each statement of a VOLATILE function
takes is in "Function Volatility Categories").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from detente.eventlog.envelope import StoredEvent
from detente.eventlog.records import LeaseRow, RecordRow
from detente.storage import rowjson
from detente.storage.sql import event_params, record_params

__all__ = [
    "COMMIT_FUNCTION",
    "UPSERT_RECORDS",
    "WRITE",
    "lease_params",
    "record_entries",
    "write_params",
]

#: The whole write of a transaction, as one function created at schema setup (plpgsql):
#: take the append lock (a no-op when the transaction took it at ``BEGIN``), check that
#: the log head is still ``p_head`` and that every trusted stream is at its expected
#: revision (else raise ``serialization_failure`` naming what moved), insert the events,
#: upsert the records, queue the ``pg_notify`` wake-up; answer ``clock_timestamp()``.
#: Lease rows (a renewal that moves only a deadline appends no event) are part of the
#: head: the highest lease stamp must still be ``p_lease_head`` (a server that has not
#: seen another's renewal loses its compare, so it never expires a renewed lease), and
#: no claim's stored lease row may be above the revision its new row extends.
#: Each statement of a VOLATILE function takes a fresh snapshot under READ COMMITTED, so
#: the head is read after the lock was granted, as
#: :data:`~detente.storage.postgres_tx.BEGIN_LOCKED` reads it. A stream's revision is one
#: backward step of the ``(subject, subject_revision)`` index per subject (``MAX`` in a
#: ``LATERAL`` subquery), never a scan of the stream's events: with ``GROUP BY`` over
#: every subject at once, a renewal read every earlier renewal of its claim, so a write
#: cost grew with the claim's age.
#: The record rows' upsert from the ``p_rows`` JSON document, shared by
#: :data:`COMMIT_FUNCTION` and the renewal's function (:mod:`.postgres_renew`).
UPSERT_RECORDS = """    INSERT INTO records (kind, id, repo, revision, status, body)
    SELECT * FROM json_to_recordset(p_rows) AS r(kind text, id text, repo text,
        revision int, status text, body text)
    ON CONFLICT (kind, id) DO UPDATE SET repo = excluded.repo,
        revision = excluded.revision, status = excluded.status, body = excluded.body;"""

COMMIT_FUNCTION = f"""
CREATE OR REPLACE FUNCTION detente_commit(
    p_lock bigint, p_head bigint, p_trusted json, p_events json, p_rows json,
    p_channel text, p_payload text, p_lease_head bigint, p_leases json
) RETURNS timestamptz LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    refusal record;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    FOR refusal IN
        SELECT 0 AS rank, format('another server appended first (the log head is at %s, '
            'expected %s)', h.have, p_head) AS message
        FROM (SELECT COALESCE(MAX(seq), 0) AS have FROM events) AS h
        WHERE h.have <> p_head
        UNION ALL
        SELECT 0, format('another server moved a lease first (lease stamp %s, expected %s)',
            l.have, p_lease_head)
        FROM (SELECT COALESCE(MAX(stamp), 0) AS have FROM leases) AS l
        WHERE l.have <> p_lease_head
        UNION ALL
        SELECT 1, format('the lease of claim %s is at revision %s, expected %s',
            s.claim_id, s.revision, w.base)
        FROM json_to_recordset(p_leases) AS w(claim_id text, base int)
        JOIN leases AS s ON s.claim_id = w.claim_id
        WHERE s.revision > w.base
        UNION ALL
        SELECT 1, format('stream %s is at revision %s, expected %s',
            w.subject, COALESCE(b.revision, 0), w.revision)
        FROM (SELECT key AS subject, value::bigint AS revision
              FROM json_each_text(p_trusted)) AS w
        LEFT JOIN LATERAL (
            SELECT MAX(e.subject_revision) AS revision FROM events AS e
            WHERE e.subject = w.subject
        ) AS b ON true
        WHERE COALESCE(b.revision, 0) <> w.revision
        ORDER BY rank LIMIT 1
    LOOP
        RAISE EXCEPTION USING MESSAGE = refusal.message, ERRCODE = 'serialization_failure';
    END LOOP;
    WITH appended AS (
        INSERT INTO events
            (seq, id, type, version, repo, subject, subject_revision, data, at, prev_hash, hash)
        SELECT * FROM json_to_recordset(p_events) AS e(seq bigint, id text, type text,
            version int, repo text, subject text, subject_revision int, data text, at text,
            prev_hash text, hash text)
    )
{UPSERT_RECORDS}
    INSERT INTO leases (claim_id, repo, lease_id, revision, ttl_seconds, expires_at, at, stamp)
    SELECT claim_id, repo, lease_id, revision, ttl_seconds, expires_at, at, stamp
    FROM json_to_recordset(p_leases) AS l(claim_id text, repo text, lease_id text,
        revision int, ttl_seconds int, expires_at text, at text, stamp bigint)
    ON CONFLICT (claim_id) DO UPDATE SET repo = excluded.repo, lease_id = excluded.lease_id,
        revision = excluded.revision, ttl_seconds = excluded.ttl_seconds,
        expires_at = excluded.expires_at, at = excluded.at, stamp = excluded.stamp;
    IF p_payload IS NOT NULL THEN
        PERFORM pg_notify(p_channel, p_payload);
    END IF;
    RETURN clock_timestamp();
END $$;
"""

#: The call of :data:`COMMIT_FUNCTION`; its parameters are :func:`write_params`. Answers
#: one row: the database clock after the write.
WRITE = "SELECT detente_commit(%s, %s, %s::json, %s::json, %s::json, %s, %s, %s, %s::json)"

_EVENT_KEYS = (
    *("seq", "id", "type", "version", "repo", "subject", "subject_revision", "data"),
    *("at", "prev_hash", "hash"),
)
_RECORD_KEYS = ("kind", "id", "repo", "revision", "status", "body")


def write_params(
    lock: int,
    head: int,
    trusted: Mapping[str, int],
    events: Sequence[StoredEvent],
    rows: Sequence[RecordRow],
    channel: str,
    lease_head: int = 0,
    leases: Sequence[tuple[LeaseRow, int]] = (),
) -> list[Any]:
    """The parameters of :data:`WRITE`: the advisory lock key, the head sequence the
    appends follow, the trusted subjects' expected revisions (a JSON object), the events,
    the records, the ``pg_notify`` channel and payload (the last sequence; None: no event),
    the highest lease stamp the transaction started from and the lease rows it writes
    (each with ``base``: the revision its claim's stored row must not exceed).

    The rows travel as one JSON document per table (encoded by orjson, unpacked by
    PostgreSQL's ``json_to_recordset``) rather than one array per column: psycopg adapts
    each array element in Python, which for a batch of N commands cost about 18 array
    adaptations plus N escaped JSON strings per column, several times the rest of the
    write (the expected revisions too: their two arrays cost more than the rest of the
    call). The event payloads and record bodies stay JSON *text* inside the document.
    A lease row's dict is spelled out (:func:`lease_params`).
    """
    events_json = [dict(zip(_EVENT_KEYS, event_params(e), strict=True)) for e in events]
    rows_json = record_entries(rows)
    leases_json = lease_params(leases)
    return [
        lock,
        head,
        rowjson.dumps_text(trusted),
        rowjson.dumps_text(events_json),
        rowjson.dumps_text(rows_json),
        channel,
        str(events[-1].seq) if events else None,
        lease_head,
        rowjson.dumps_text(leases_json),
    ]


def lease_params(leases: Sequence[tuple[LeaseRow, int]]) -> list[dict[str, Any]]:
    """The lease rows of a write as the JSON document's entries, each with ``base``: the
    revision its claim's stored row must not exceed. Spelled out rather than
    ``dataclasses.asdict``, which copied each value deeply (a twentieth of a renewal's
    CPU)."""
    return [
        {
            "claim_id": row.claim_id,
            "repo": row.repo,
            "lease_id": row.lease_id,
            "revision": row.revision,
            "ttl_seconds": row.ttl_seconds,
            "expires_at": row.expires_at,
            "at": row.at,
            "stamp": row.stamp,
            "base": base,
        }
        for row, base in leases
    ]


def record_entries(rows: Sequence[RecordRow]) -> list[dict[str, Any]]:
    """The record rows of a write as the ``p_rows`` JSON document's entries."""
    return [dict(zip(_RECORD_KEYS, record_params(r), strict=True)) for r in rows]
