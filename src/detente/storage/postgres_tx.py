"""A PostgreSQL write transaction in one round trip, or two, whatever the batch size.

A group-committed batch (:mod:`detente.service.group_commit`) on PostgreSQL used to pay
about ten round trips: ``BEGIN``, the advisory lock, the clock, the catch-up read, the
chain head, the base-revision check, two ``executemany`` and ``pg_notify`` before the
``COMMIT``. Each is a wake-up of the server process and of this one, which on a loaded
machine costs far more than the work. Here a transaction is one of:

- **from memory** (one round trip): the store remembers the head its own last commit
  left and a recent reading of the database clock
  (:mod:`detente.storage.postgres_memory`). The commands are decided on that, and the
  whole write is ONE autocommitted call of :data:`COMMIT_FUNCTION`, which takes the
  append lock, checks that the head has not moved and writes. If another server
  committed meanwhile, the call fails (``serialization_failure``) and the batch is
  decided again on fresh state, as for any lost race;
- **locked** (two round trips), when nothing is remembered (the first write, after a
  lost race, after an idle spell):

  1. :data:`BEGIN_LOCKED`: ``BEGIN``, ``pg_advisory_xact_lock`` and one ``SELECT`` of the
     database clock and the chain head, sent as one simple-protocol string. Under READ
     COMMITTED each statement of the string takes its own snapshot, so the head is read
     *after* the lock was granted (what the sequence-equals-commit-order argument of
     :mod:`detente.storage.postgres` needs). With the head known, catching up when
     nothing was committed elsewhere needs no query at all;
  2. :data:`WRITE` (the same function; the lock is already held) and ``COMMIT``,
     pipelined (psycopg's pipeline mode: sent together, answered together).

Either way the function (:mod:`detente.storage.postgres_write`) checks the base
revisions the appends were trusted with, inserts every event and upserts every projection
row (``json_to_recordset`` over one JSON document per table: one fixed call, prepared by
psycopg after a few uses, whatever the number of rows). A moved head or a wrong base
revision raises ``serialization_failure`` and a duplicate ``(subject, subject_revision)``
or sequence fails the statement (a race); either way nothing is written (see
:func:`lost_race`).

The approach is the usual one for batch inserts from a client (PostgreSQL documents
``json_to_recordset`` in its JSON-functions chapter, the snapshot each statement of a
VOLATILE function takes in "Function Volatility Categories", and pipelining in libpq's
"Pipeline Mode"); starting from a remembered head is the optimistic compare-and-swap of
:mod:`detente.storage.etcd_head`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from detente.errors import ConcurrencyError
from detente.eventlog.envelope import GENESIS_HASH, StoredEvent
from detente.eventlog.records import LeaseRow
from detente.storage.postgres_renew import renew_params
from detente.storage.postgres_write import COMMIT_FUNCTION, WRITE, write_params
from detente.storage.sql import Dialect, SqlTx

__all__ = [
    "BEGIN_LOCKED",
    "COMMIT_FUNCTION",
    "HEAD_SEQ",
    "WRITE",
    "PgTx",
    "begin",
    "begin_sql",
    "commit_locked",
    "commit_remembered",
    "lost_race",
    "write_params",
]

#: Its last statement answers ``(clock_timestamp(), head seq, head hash, head at,
#: highest lease-row stamp)`` (the head columns are NULL on an empty log). ``{lock}`` is
#: the advisory lock key.
BEGIN_LOCKED = (
    "BEGIN; SELECT pg_advisory_xact_lock({lock}); "
    "SELECT clock_timestamp(), h.seq, h.hash, h.at, "
    "(SELECT COALESCE(MAX(stamp), 0) FROM leases) FROM (SELECT 1) AS one "
    "LEFT JOIN (SELECT seq, hash, at FROM events ORDER BY seq DESC LIMIT 1) AS h ON true"
)

#: The log head's sequence (0: empty) and the highest lease stamp, to check a write-less
#: transaction started from memory.
HEAD_SEQ = (
    "SELECT (SELECT COALESCE(MAX(seq), 0) FROM events), "
    "(SELECT COALESCE(MAX(stamp), 0) FROM leases)"
)


def begin_sql(lock: int) -> str:
    """:data:`BEGIN_LOCKED` for advisory lock key ``lock``."""
    return BEGIN_LOCKED.format(lock=int(lock))


#: Runs one statement with parameters and returns its rows.
Query = Callable[[str, Sequence[Any]], list[Any]]


class PgTx(SqlTx):
    """:class:`~detente.storage.sql.SqlTx` with a known starting head and one write.

    Args:
        dialect: the PostgreSQL dialect.
        fetch: runs a statement on the transaction's connection and returns its rows.
        head: ``(seq, hash)`` of the log: read under the lock at ``BEGIN``, or remembered
            from this store's own last commit (the write checks it either way).
        lease_head: the highest lease-row stamp, read or remembered with ``head`` (the
            write checks it too).
        follow_leases: read other writers' lease rows when caught up (see
            :meth:`leases_after`).
    """

    def __init__(
        self,
        dialect: Dialect,
        fetch: Query,
        head: tuple[int, str],
        lease_head: int = 0,
        *,
        follow_leases: bool = True,
    ) -> None:
        super().__init__(dialect, fetch, self._no_execute_many, lease_stamp=lease_head)
        self._query = fetch
        self._head = head
        self._lease_head = lease_head
        self._follow = follow_leases
        #: Set when a lease-only write from memory may have rows of other servers below
        #: its own that the projection has not folded (:meth:`saw_shift`).
        self.unseen_leases = False
        self._shift = 0

    def leases_after(self, stamp: int, repo: str) -> list[LeaseRow]:
        """See :meth:`detente.storage.base.LeaseTx.leases_after`: no query when ``stamp``
        is already the lease head, nor without ``follow_leases`` (a batch of renewals
        started from memory: its write compares no lease head,
        :mod:`detente.storage.postgres_renew`; other servers' rows are folded by the next
        batch that appends, which starts locked, or by the sweep)."""
        if not self._follow or stamp >= self._lease_head:
            return []
        return super().leases_after(stamp, repo)

    @property
    def follows_leases(self) -> bool:
        """Does this transaction read other writers' lease rows (see :meth:`leases_after`)?"""
        return self._follow

    @property
    def compared(self) -> int:
        """The lease head a write that is not a lease-only one compares: the one this
        transaction started from; -1 (no head: the compare fails, and the batch runs again
        on the locked path) when it did not follow other servers' lease rows, since its
        projection may lack rows below that head and a decision made on it (an expiry, a
        refusal) must not commit."""
        return self._lease_head if self._follow else -1

    def saw_shift(self, shift: int) -> None:
        """A lease-only write from memory committed with its stamps raised by ``shift``
        (:func:`~detente.storage.postgres_renew.commit_renewal`): above zero, rows of
        other servers lie below this transaction's own, unseen (:attr:`unseen_leases`);
        so may they when the transaction did not follow them (rows below the lease head
        it started from that an earlier transaction did not read either)."""
        self._shift = shift
        self.unseen_leases = shift > 0 or not self._follow

    @property
    def lease_head(self) -> int:
        """The highest lease stamp after this transaction's writes (the rows it wrote are
        the newest: stamps are taken under the append lock)."""
        written = self._leases.stamp
        return self._lease_head if written is None else max(written + self._shift, self._lease_head)

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

    @property
    def head(self) -> tuple[int, str]:
        """``(seq, hash)`` of the log when the transaction started."""
        return self._head

    def write(self, lock: int, channel: str) -> list[Any] | None:
        """The parameters of :data:`WRITE` (advisory lock key ``lock``, wake-ups on
        ``channel``) for everything not written yet (None: nothing to write); marks it
        written. The caller sends the call (:meth:`detente.storage.postgres.PostgresStore.
        transaction`): a moved head, a wrong base revision or a lost insert race fails it
        (see :func:`lost_race`)."""
        trusted = {s: self._base[s] for s in self._trusted}
        events = self.appended[self._flushed :]
        leases = self._leases.take()
        if not trusted and not events and not self._rows and not leases:
            return None
        rows = list(self._rows.values())
        head = self._head[0]
        params = write_params(lock, head, trusted, events, rows, channel, self.compared, leases)
        self._trusted.clear()
        self._flushed = len(self.appended)
        self._rows.clear()
        return params

    def renewal(self, lock: int) -> list[Any] | None:
        """The parameters of :data:`~detente.storage.postgres_renew.RENEW` when this
        transaction moves lease rows and appends no event (a batch of renewals), marking
        them written; None otherwise (write it with :meth:`write`)."""
        if self._trusted or self.appended[self._flushed :] or not self._leases.pending:
            return None
        leases = self._leases.take()
        rows = list(self._rows.values())
        self._rows.clear()
        return renew_params(lock, self._head[0], rows, self._lease_head, leases)

    def flush(self) -> None:  # pragma: no cover - the store pipelines write() instead
        raise RuntimeError("PgTx is written by PostgresStore.transaction (write())")


def lost_race(exc: BaseException) -> ConcurrencyError | None:
    """The :class:`~detente.errors.ConcurrencyError` a failed :data:`WRITE` stands for:
    a moved head or a stream not at its expected revision (``serialization_failure``,
    raised by :data:`COMMIT_FUNCTION`) or a duplicate ``(subject, subject_revision)`` or
    sequence (another writer appended first); None for any other failure."""
    if isinstance(exc, pg_errors.SerializationFailure):
        return ConcurrencyError(exc.diag.message_primary or str(exc))
    if isinstance(exc, pg_errors.UniqueViolation):
        return ConcurrencyError(f"append lost a race: {exc}")
    return None


#: A connection of the store (autocommit, as the pool lends it).
Conn = psycopg.Connection[Any]


def begin(conn: Conn, lock: int) -> tuple[tuple[int, str], datetime, str | None, int]:
    """``BEGIN``, take advisory lock ``lock``, read the clock and the head (one round trip):
    ``((seq, hash), database clock in UTC, at of the head event or None, highest lease
    stamp)``."""
    cur = conn.execute(begin_sql(lock))
    cur.nextset()
    cur.nextset()
    [(now, seq, hash_, at, stamp)] = cur.fetchall()
    head = (int(seq), str(hash_)) if seq is not None else (0, GENESIS_HASH)
    return head, now.astimezone(UTC), (str(at) if at is not None else None), int(stamp)


def commit_locked(conn: Conn, params: list[Any] | None) -> datetime | None:
    """Write (if anything) and ``COMMIT`` a transaction opened by :func:`begin`, in one
    round trip; the database clock after the write (None: nothing written). Never as
    prepared statements: a statement psycopg prepares in a pipeline that a race aborts is
    skipped by the server but cached as prepared by the client ("prepared statement does
    not exist").

    Raises:
        psycopg.Error: the write failed (see :func:`lost_race`); nothing was committed.
    """
    cur = None
    with conn.pipeline():
        if params is not None:
            cur = conn.execute(WRITE, params, prepare=False)
        conn.execute("COMMIT", prepare=False)
    row = cur.fetchone() if cur is not None else None
    return row[0].astimezone(UTC) if row is not None else None


def commit_remembered(
    conn: Conn, params: list[Any] | None, head: int, lease_head: int = 0
) -> datetime | None:
    """Commit a transaction started from memory: the write as one autocommitted call (it
    takes the lock and checks that the log is still at ``head``), or, with nothing to
    write, one read checking that the head has not moved (a refusal is never decided on
    a log another server has moved). Returns the database clock after the write (None:
    nothing written).

    Raises:
        ConcurrencyError: a write-less transaction's head moved.
        psycopg.Error: the write failed (see :func:`lost_race`: a moved head is a
            ``serialization_failure``); nothing was committed.
    """
    if params is not None:
        row = conn.execute(WRITE, params).fetchone()
        return row[0].astimezone(UTC) if row is not None else None
    [(seq, stamp)] = conn.execute(HEAD_SEQ).fetchall()
    if (int(seq), int(stamp)) != (head, lease_head):
        raise ConcurrencyError("another server appended first (the log head moved)")
    return None
