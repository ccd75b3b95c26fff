"""A renewal from memory on PostgreSQL that does not lose to other servers' renewals.

A transaction started from the head its store's own last commit left
(:mod:`detente.storage.postgres_tx`) checks, under the append lock, that nothing moved
since: the log's head *and* the highest lease-row stamp. With several servers the second
check failed almost every time: another server's heartbeat moves a lease row (no event)
between any two commits of this one, so nearly every renewal lost its compare, threw away
its projection (restored from the newest snapshot) and ran again on the locked path.

A transaction that writes lease rows and record rows but appends no event (a batch of
renewals that only move deadlines) is written here by :data:`RENEW_FUNCTION` instead,
which keeps every guarantee a renewal has and drops only the lease-head compare:

- **the log head** must still be the remembered one (the claim's status, holder, lease
  id and fencing token are decided on a projection at the head: a claim another server
  ended, took over or changed refuses the write);
- **each lease row** must not be above the revision the renewal extends (the
  compare-and-swap on the lease revision: two servers that both decided revision 5 of
  one lease cannot both write it);
- **stamps** are taken under the lock above the highest stored one (the store-wide
  change counter stays in commit order, so a reader that folds ``stamp > seen`` skips
  nothing). The rows were stamped from the remembered lease head; the function adds the
  *shift* (stored highest minus remembered) and answers it. A shift above zero means
  rows of other servers lie between the remembered head and this transaction's own, not
  folded by this server's projection: its caller keeps its projection's lease stamp and
  its remembered lease head where they were, so its next catch-up reads them.

Every transaction that appends events still compares both heads
(:data:`~detente.storage.postgres_write.COMMIT_FUNCTION`): an expiry, a takeover, a lease
checkpoint or an overlap decision is never made on lease rows the server has not seen,
so a lease is still expired exactly once and never before its acknowledged deadline.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from detente.eventlog.records import LeaseRow, RecordRow
from detente.storage import rowjson
from detente.storage.postgres_write import UPSERT_RECORDS, lease_params, record_entries

if TYPE_CHECKING:
    import psycopg

__all__ = ["RENEW", "RENEW_FUNCTION", "commit_renewal", "renew_params"]

#: A lease-only write from memory (plpgsql; created at schema setup): take the append
#: lock, refuse (``serialization_failure``) when the log head is not ``p_head`` or a
#: claim's stored lease row is above the revision its new row extends, upsert the record
#: rows and the lease rows (stamps raised by the shift), answer ``(clock_timestamp(),
#: shift)``. Each statement of a VOLATILE function takes a fresh snapshot under READ
#: COMMITTED, so everything is read after the lock was granted.
RENEW_FUNCTION = f"""
CREATE OR REPLACE FUNCTION detente_renew(
    p_lock bigint, p_head bigint, p_rows json, p_lease_head bigint, p_leases json
) RETURNS TABLE (o_at timestamptz, o_shift bigint) LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    refusal text;
    v_shift bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock);
    SELECT format('another server appended first (the log head is at %s, expected %s)',
        h.have, p_head) INTO refusal
    FROM (SELECT COALESCE(MAX(seq), 0) AS have FROM events) AS h WHERE h.have <> p_head;
    IF refusal IS NULL THEN
        SELECT format('the lease of claim %s is at revision %s, expected %s',
            s.claim_id, s.revision, w.base) INTO refusal
        FROM json_to_recordset(p_leases) AS w(claim_id text, base int)
        JOIN leases AS s ON s.claim_id = w.claim_id
        WHERE s.revision > w.base LIMIT 1;
    END IF;
    IF refusal IS NOT NULL THEN
        RAISE EXCEPTION USING MESSAGE = refusal, ERRCODE = 'serialization_failure';
    END IF;
    SELECT GREATEST(COALESCE(MAX(l.stamp), 0) - p_lease_head, 0) INTO v_shift FROM leases AS l;
{UPSERT_RECORDS}
    INSERT INTO leases (claim_id, repo, lease_id, revision, ttl_seconds, expires_at, at, stamp)
    SELECT l.claim_id, l.repo, l.lease_id, l.revision, l.ttl_seconds, l.expires_at, l.at,
        l.stamp + v_shift
    FROM json_to_recordset(p_leases) AS l(claim_id text, repo text, lease_id text,
        revision int, ttl_seconds int, expires_at text, at text, stamp bigint)
    ON CONFLICT (claim_id) DO UPDATE SET repo = excluded.repo, lease_id = excluded.lease_id,
        revision = excluded.revision, ttl_seconds = excluded.ttl_seconds,
        expires_at = excluded.expires_at, at = excluded.at, stamp = excluded.stamp;
    RETURN QUERY SELECT clock_timestamp(), v_shift;
END $$;
"""

#: The call of :data:`RENEW_FUNCTION`; its parameters are :func:`renew_params`.
RENEW = "SELECT o_at, o_shift FROM detente_renew(%s, %s, %s::json, %s, %s::json)"


def renew_params(
    lock: int,
    head: int,
    rows: Sequence[RecordRow],
    lease_head: int,
    leases: Sequence[tuple[LeaseRow, int]],
) -> list[Any]:
    """The parameters of :data:`RENEW`: the advisory lock key, the remembered head
    sequence, the record rows, the remembered highest lease stamp (the rows' stamps follow
    it) and the lease rows, each with ``base``: the revision its claim's stored row must
    not exceed (one JSON document per table, as
    :func:`~detente.storage.postgres_write.write_params` sends them)."""
    rows_json = record_entries(rows)
    leases_json = lease_params(leases)
    return [lock, head, rowjson.dumps_text(rows_json), lease_head, rowjson.dumps_text(leases_json)]


def commit_renewal(conn: psycopg.Connection[Any], params: list[Any]) -> tuple[datetime, int]:
    """Send :data:`RENEW` (autocommitted: one round trip) and answer ``(the database
    clock after the write, the shift added to the rows' stamps)``.

    Raises:
        psycopg.Error: refused (``serialization_failure``: the head moved, or a lease row
            is already at or above a written revision; see
            :func:`~detente.storage.postgres_tx.lost_race`); nothing was written.
    """
    row = conn.execute(RENEW, params).fetchone()
    if row is None:  # pragma: no cover - the function always answers one row
        raise RuntimeError("detente_renew answered no row")
    return row[0].astimezone(UTC), int(row[1])
