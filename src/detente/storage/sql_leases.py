"""Lease rows on the SQL stores: each claim's current lease, moved by compare-and-swap.

A renewal that only moves a deadline writes its claim's row of the ``leases`` table
instead of appending a chained event (``docs/architecture.md``, "Heartbeats that cost
what they change"). The row is updated in place, so a store's size does not grow with
its heartbeats. ``stamp`` is the store's change counter for lease rows (``MAX + 1``
inside the write transaction, like the event sequence), so a reader folds only the rows
changed since the highest stamp it has seen (index ``(repo, stamp)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from detente.errors import ConcurrencyError
from detente.eventlog.records import LeaseRow

__all__ = ["LEASE_TABLES", "SqlLeaseWrites", "lease_rows_after"]

#: The ``leases`` table (part of every SQL store's schema).
LEASE_TABLES = """
CREATE TABLE IF NOT EXISTS leases (
    claim_id TEXT PRIMARY KEY,
    repo TEXT NOT NULL,
    lease_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    ttl_seconds INTEGER NOT NULL,
    expires_at TEXT NOT NULL,
    at TEXT NOT NULL,
    stamp BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS leases_repo_stamp ON leases (repo, stamp);
CREATE INDEX IF NOT EXISTS leases_stamp ON leases (stamp);
"""

_LEASE_COLUMNS = "claim_id, repo, lease_id, revision, ttl_seconds, expires_at, at, stamp"
_AFTER = f"SELECT {_LEASE_COLUMNS} FROM leases WHERE repo = ? AND stamp > ? ORDER BY stamp"
_MAX_STAMP = "SELECT COALESCE(MAX(stamp), 0) FROM leases"
_UPSERT = (
    f"INSERT INTO leases ({_LEASE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?) "
    "ON CONFLICT (claim_id) DO UPDATE SET repo = excluded.repo, "
    "lease_id = excluded.lease_id, revision = excluded.revision, "
    "ttl_seconds = excluded.ttl_seconds, expires_at = excluded.expires_at, "
    "at = excluded.at, stamp = excluded.stamp"
)

#: Runs one SELECT in the dialect's spelling: ``(sql with ? markers, params) -> rows``.
Fetch = Callable[[str, Sequence[Any]], list[Any]]
#: Runs one write statement (``?`` markers) for each parameter tuple.
ExecuteMany = Callable[[str, list[tuple[Any, ...]]], None]


def _row(r: Sequence[Any]) -> LeaseRow:
    return LeaseRow(
        claim_id=str(r[0]),
        repo=str(r[1]),
        lease_id=str(r[2]),
        revision=int(r[3]),
        ttl_seconds=int(r[4]),
        expires_at=str(r[5]),
        at=str(r[6]),
        stamp=int(r[7]),
    )


def _params(r: LeaseRow) -> tuple[Any, ...]:
    head = (r.claim_id, r.repo, r.lease_id, r.revision, r.ttl_seconds)
    return (*head, r.expires_at, r.at, r.stamp)


def lease_rows_after(fetch: Fetch, stamp: int, repo: str) -> list[LeaseRow]:
    """The lease rows of ``repo`` with a stamp above ``stamp``, by stamp."""
    return [_row(r) for r in fetch(_AFTER, (repo, stamp))]


class SqlLeaseWrites:
    """The lease rows one SQL transaction writes (checked and written at its flush).

    Args:
        fetch: runs a SELECT on the transaction's connection (``?`` markers).
        execute_many: runs a write on the transaction's connection (``?`` markers).
    """

    def __init__(
        self, fetch: Fetch, execute_many: ExecuteMany, *, stamp: int | None = None
    ) -> None:
        self._fetch = fetch
        self._execute_many = execute_many
        self._rows: dict[str, LeaseRow] = {}
        self._base: dict[str, int] = {}  # claim -> the revision its first row extends
        #: The highest stamp assigned (None: not read yet; PostgreSQL knows it at start).
        self._stamp: int | None = stamp

    @property
    def stamp(self) -> int | None:
        """The highest stamp this transaction assigned or started from (None: unknown)."""
        return self._stamp

    @property
    def pending(self) -> bool:
        """True when rows wait to be written."""
        return bool(self._rows)

    def take(self) -> list[tuple[LeaseRow, int]]:
        """The rows not written yet, each with the revision its claim's stored row must
        not exceed; forgets them (the caller writes them: PostgreSQL's commit function)."""
        out = [(row, self._base[claim]) for claim, row in self._rows.items()]
        self._rows.clear()
        self._base.clear()
        return out

    def write(self, rows: Sequence[LeaseRow]) -> list[LeaseRow]:
        """See :meth:`detente.storage.base.LeaseTx.write_leases` (the stored revisions are
        compared at :meth:`flush`)."""
        if self._stamp is None:
            self._stamp = int(self._fetch(_MAX_STAMP, ())[0][0])
        out: list[LeaseRow] = []
        for row in rows:
            self._stamp += 1
            stored = replace(row, stamp=self._stamp)
            held = self._rows.get(row.claim_id)
            if held is not None and held.revision >= row.revision:
                raise ConcurrencyError(
                    f"the lease of claim {row.claim_id} moved twice to revision {row.revision}"
                )
            self._base.setdefault(row.claim_id, row.revision - 1)
            self._rows[row.claim_id] = stored
            out.append(stored)
        return out

    def flush(self) -> None:
        """Compare every claim's stored lease revision with the one its first row extends,
        then upsert the rows (call once, before COMMIT, holding the store's write lock).

        Raises:
            ConcurrencyError: ``store_concurrency`` when a stored row is already at or above
                a written revision (another writer renewed first); nothing is written.
        """
        if not self._rows:
            return
        claims = sorted(self._rows)
        for start in range(0, len(claims), 500):
            chunk = claims[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT claim_id, revision FROM leases WHERE claim_id IN ({marks})"
            for claim_id, revision in self._fetch(query, chunk):
                if int(revision) > self._base[str(claim_id)]:
                    raise ConcurrencyError(
                        f"the lease of claim {claim_id} is at revision {revision}, "
                        f"expected {self._base[str(claim_id)]}",
                        subject=f"claim/{claim_id}",
                        expected=self._base[str(claim_id)],
                        actual=int(revision),
                    )
        rows = self._rows.values()
        self._execute_many(_UPSERT, [_params(r) for r in rows])
        self._rows.clear()
        self._base.clear()
