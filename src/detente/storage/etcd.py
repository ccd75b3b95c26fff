"""The etcd backend (``etcd://h1:p1,h2:p2,h3:p3[/prefix]``): the log on a consensus store.

The keys (``/P/head``, ``/P/events/<seq>``, ``/P/repos/<repo>/events/<seq>``,
``/P/streams/<subject>``, ``/P/records/<kind>/<id>``, ``/P/leases/<repo>/<claim>`` under
the URL's prefix ``P``) and
the JSON stored under them are laid out in :mod:`detente.storage.etcd_layout`.

Every command is ONE etcd ``Txn``: compare ``mod_revision(/P/head)`` with the head the
transaction started from, read when it began or remembered from this store's own last
commit (:mod:`detente.storage.etcd_head`; so appends are serialized globally: one
sequence, one hash chain, in commit order) and every touched stream's revision with the
expected one; on success put the events, their per-repo copies, the stream revisions,
the projection rows, the lease rows (a renewal appends no event:
:mod:`detente.storage.etcd_leases`) and the new head together. A lost compare is
:class:`~detente.errors.ConcurrencyError` and the service retries on fresh state. That
compare is also the fence: a server that was partitioned or decided on a stale view
cannot commit, whatever it believes.

History lives in explicit keys that are never overwritten, so MVCC compaction (which
only drops *old versions* of keys) never loses an event: we never read at an old
revision except the snapshot of a running transaction, and a compacted snapshot fails
that transaction's compare like any race. The head watch used to wake watchers is a
hint; after a compaction error it restarts from the current revision.

Failover: requests go to one endpoint; on ``UNAVAILABLE``/deadline errors (member down,
no leader) the next endpoint is tried until :data:`FAILOVER_SECONDS` pass. A commit
whose reply was lost is re-sent unchanged (the head compare lets at most one copy
apply) and then looked up by its first event id, so an applied command is never
reported as failed nor applied twice.

aetcd is asyncio-only; :class:`EtcdStore` is a synchronous facade running it on the
private event loop thread of its :class:`~detente.storage.etcd_connection.EtcdConnection`
(which also does the endpoint failover).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeVar

import aetcd
from aetcd import rpc

from detente.clock import format_time, parse_time
from detente.errors import ConcurrencyError, StoreError
from detente.eventlog.envelope import GENESIS_HASH, StoredEvent
from detente.eventlog.subscription import Broadcaster
from detente.storage.base import LeaseRow, PagedReads, RecordRow
from detente.storage.etcd_connection import FAILOVER_SECONDS, RPC_TIMEOUT, EtcdConnection
from detente.storage.etcd_head import Head, HeadMemory
from detente.storage.etcd_layout import (
    EtcdKeys,
    event_from_json,
    prefix_end,
    record_from_json,
)
from detente.storage.etcd_leases import read_leases
from detente.storage.etcd_snapshots import EtcdSnapshots
from detente.storage.etcd_tx import EtcdTx, txn_request
from detente.storage.etcd_url import MAX_TXN_OPS, parse_etcd_url, parse_max_txn_ops
from detente.storage.watch_health import WatchHealth

__all__ = [
    "FAILOVER_SECONDS",
    "MAX_TXN_OPS",
    "RPC_TIMEOUT",
    "EtcdStore",
    "parse_etcd_url",
    "parse_max_txn_ops",
]

T = TypeVar("T")

_PAGE = 500
#: The most lease keys remembered from this store's own commits (then read again).
_LEASE_MEMORY = 10_000
#: Puts one appended event may need: the event, its per-repo copy, its stream, its row.
_OPS_PER_EVENT = 4


class EtcdStore(EtcdSnapshots, PagedReads):
    """An etcd cluster shared by any number of detente servers (see the module docstring).

    Args:
        endpoints: ``(host, port)`` of each member's client URL.
        prefix: the key namespace (one detente installation per prefix).
        url: the URL this store was opened from (for display).
        max_txn_ops: the cluster's ``--max-txn-ops``; a command needing more operations
            is refused before it is sent, and lease expiries are batched to fit.

    Raises:
        StoreError: ``store_unavailable`` when no endpoint answers.
    """

    def __init__(
        self,
        endpoints: Sequence[tuple[str, int]],
        *,
        prefix: str = "detente",
        url: str = "",
        max_txn_ops: int = MAX_TXN_OPS,
    ) -> None:
        self.url = url or "etcd://" + ",".join(f"{h}:{p}" for h, p in endpoints) + f"/{prefix}"
        self._connection = EtcdConnection(endpoints)
        self.max_txn_ops = max_txn_ops
        #: The most events one transaction may append (see ``BoundedStore``).
        self.max_events_per_transaction = (max_txn_ops - 1) // _OPS_PER_EVENT
        self._keys = EtcdKeys(prefix)
        self._tx_lock = threading.Lock()  # this process's writers never conflict with each other
        #: The head this store's last transaction left (a transaction's first guess).
        self.heads = HeadMemory()
        #: ``claim -> (lease revision, mod_revision)`` of the lease keys this store's own
        #: commits wrote since it last read the head (:mod:`detente.storage.etcd_leases`).
        self._lease_keys: dict[str, tuple[int, int]] = {}
        self._listeners = Broadcaster()
        self._listen_lock = threading.Lock()
        self._watch_task: concurrent.futures.Future[None] | None = None
        self.watch_health = WatchHealth("etcd watch")
        self._last_at: datetime | None = None
        self.head()  # fail fast when no member answers

    # ------------------------------------------------------------------ plumbing

    async def _call(self, op: Callable[[aetcd.Client], Awaitable[T]]) -> T:
        """Run ``op`` on the current endpoint, failing over on unavailability."""
        # FAILOVER_SECONDS is read here, at call time, so that it can be tuned as
        # ``detente.storage.etcd.FAILOVER_SECONDS``.
        return await self._connection.call(op, failover_seconds=FAILOVER_SECONDS)

    async def _range(
        self, start: bytes, end: bytes, *, limit: int = 0, revision: int = 0
    ) -> tuple[list[Any], int]:
        """``(kvs, header revision)`` of ``[start, end)`` in key order."""

        async def op(client: aetcd.Client) -> tuple[list[Any], int]:
            request = rpc.RangeRequest(key=start, range_end=end, limit=limit, revision=revision)
            reply = await client.kvstub.Range(
                request, timeout=RPC_TIMEOUT, metadata=client.metadata
            )
            return list(reply.kvs), int(reply.header.revision)

        return await self._call(op)

    def _range_events(
        self, prefix: bytes, *, since: int, limit: int | None = None, revision: int = 0
    ) -> list[StoredEvent]:
        out: list[StoredEvent] = []
        start, end = prefix + b"%020d" % (since + 1), prefix_end(prefix)
        while limit is None or len(out) < limit:
            page = _PAGE if limit is None else min(_PAGE, limit - len(out))
            kvs, _ = self._connection.run(self._range(start, end, limit=page, revision=revision))
            out.extend(event_from_json(kv.value) for kv in kvs)
            if len(kvs) < page:
                break
            start = kvs[-1].key + b"\0"
        return out

    def _stream_revision(self, subject: str, revision: int) -> int:
        key = self._keys.stream(subject)
        kvs, _ = self._connection.run(self._range(key, b"", revision=revision))
        return int(kvs[0].value) if kvs else 0

    def _read_head(self) -> Head:
        kvs, revision = self._connection.run(self._range(self._keys.head, b""))
        if not kvs:
            return Head(0, GENESIS_HASH, 0, revision)
        body = json.loads(kvs[0].value)
        self._see(body.get("at"))
        stamp = int(body.get("leaseStamp", 0))
        mod = kvs[0].mod_revision
        return Head(body["seq"], body["hash"], mod, revision, at=body.get("at"), lease_stamp=stamp)

    def _see(self, at: str | None) -> None:
        """Remember the newest commit time seen (the floor of :meth:`now`)."""
        try:
            when = parse_time(at) if at else None
        except ValueError:  # not a time (hand-written events in tests)
            return
        if when is not None and (self._last_at is None or when > self._last_at):
            self._last_at = when

    # ------------------------------------------------------------------ writes

    @contextmanager
    def transaction(self, repo: str) -> Iterator[EtcdTx]:
        """One optimistic unit of work, committed as a single etcd Txn on exit.

        It starts from the head this store's own last commit left when it has one (no
        round trip; :mod:`detente.storage.etcd_head`), else from a read of the head. A
        transaction that started from memory and writes nothing reads the head before it
        ends, so what it decided (a refusal) was decided on the current log.

        Raises:
            ConcurrencyError: ``store_concurrency`` when another server committed first
                (the head moved) or a stream revision is not the expected one.
            StoreError: ``store_unavailable`` when no member answers in time.
        """
        with self._tx_lock:
            head = self.heads.take() or self._read_head()
            if not head.remembered or len(self._lease_keys) > _LEASE_MEMORY:
                self._lease_keys.clear()
            tx = EtcdTx(
                head,
                self._keys,
                lambda subject: self._stream_revision(subject, head.revision),
                lambda repo, seq: self._range_events(
                    self._keys.repo_events(repo), since=seq, revision=head.revision
                ),
                lambda stamp, repo: self._leases_after(stamp, repo, revision=head.revision),
                self._lease_keys,
            )
            try:
                yield tx
                if tx.events or tx.rows or tx.leases.rows:
                    revision = self._connection.run(self._commit(tx))
                    stamp = tx.leases.stamp
                    for row in tx.leases.rows.values():
                        if revision:
                            self._lease_keys[row.claim_id] = (row.revision, revision)
                        else:  # an earlier copy applied: the revision is not known
                            self._lease_keys.pop(row.claim_id, None)
                    if tx.events:
                        self._see(tx.events[-1].at)
                        last = tx.events[-1]
                        head = Head(last.seq, last.hash, revision, revision, at=last.at)
                        head = replace(head, lease_stamp=stamp)
                    elif tx.leases.rows:
                        head = replace(head, mod_revision=revision, revision=revision)
                        head = replace(head, lease_stamp=stamp, remembered=False)
                elif head.remembered and self._read_head().mod_revision != head.mod_revision:
                    raise ConcurrencyError("another server appended first (the log head moved)")
            except ConcurrencyError as exc:
                self._lease_keys.clear()
                self.heads.lost()
                exc.remembered = head.remembered
                raise
            except BaseException:
                self._lease_keys.clear()
                self.heads.forget()
                raise
            if head.mod_revision or not (tx.events or tx.leases.rows):
                self.heads.keep(head)

    async def _commit(self, tx: EtcdTx) -> int:
        """Send ``tx`` as one Txn; returns the store revision it committed at (0: not
        known, an earlier copy of the request was found applied).

        Raises:
            ConcurrencyError: a compare failed (the head or a stream moved).
            StoreError: ``store_unavailable``, or the Txn needs more operations than the
                cluster allows.
        """
        if tx.leases.rows:  # read the lease keys it moves: refusal, and their compares
            await self._call(tx.leases.check)
        compare, ops = txn_request(tx, self._keys)
        if max(len(ops), len(compare)) > self.max_txn_ops:
            raise StoreError(
                f"{self._connection.name}: one command needs {max(len(ops), len(compare))} "
                f"operations, more than the cluster's --max-txn-ops {self.max_txn_ops} "
                "(raise it, and max_txn_ops in the store URL)"
            )
        request = rpc.TxnRequest(compare=compare, success=ops, failure=[])
        sent = False

        async def applied(client: aetcd.Client) -> bool:
            if tx.events:
                return await self._has_event(client, tx.events[0])
            return bool(tx.leases.rows) and await tx.leases.applied(client)

        async def op(client: aetcd.Client) -> int | None:
            nonlocal sent
            if sent and await applied(client):
                return 0  # an earlier copy of this request was applied
            sent = True
            reply = await client.kvstub.Txn(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
            if reply.succeeded:
                return int(reply.header.revision)
            return 0 if await applied(client) else None

        revision = await self._call(op)
        if revision is None:
            raise ConcurrencyError("another server appended first (the log head moved)")
        return revision

    async def _has_event(self, client: aetcd.Client, event: StoredEvent) -> bool:
        request = rpc.RangeRequest(key=self._keys.event(event.seq))
        reply = await client.kvstub.Range(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
        return bool(reply.kvs) and event_from_json(reply.kvs[0].value).id == event.id

    # ------------------------------------------------------------------ reads

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]:
        prefix = self._keys.events if repo is None else self._keys.repo_events(repo)
        return self._range_events(prefix, since=max(since, 0), limit=max(limit, 0))

    def head(self) -> tuple[int, str]:
        head = self._read_head()
        return head.seq, head.hash

    def records(self, kind: str, repo: str | None = None) -> list[RecordRow]:
        prefix = self._keys.records(kind)
        start, end, rows = prefix, prefix_end(prefix), []
        while True:
            kvs, _ = self._connection.run(self._range(start, end, limit=_PAGE))
            for kv in kvs:
                row = record_from_json(kind, kv.key[len(prefix) :], kv.value)
                if repo is None or row.repo == repo:
                    rows.append(row)
            if len(kvs) < _PAGE:
                return sorted(rows, key=lambda r: r.id)
            start = kvs[-1].key + b"\0"

    def leases_after(self, stamp: int, repo: str) -> list[LeaseRow]:
        """See :meth:`detente.storage.base.LeaseStore.leases_after` (a renewal moves a
        lease key and appends no event: :mod:`detente.storage.etcd_leases`)."""
        return self._leases_after(stamp, repo, revision=0)

    def _leases_after(self, stamp: int, repo: str, *, revision: int) -> list[LeaseRow]:
        prefix = self._keys.leases(repo)
        start, end, kvs = prefix, prefix_end(prefix), []
        while True:
            page, _ = self._connection.run(self._range(start, end, limit=_PAGE, revision=revision))
            kvs.extend(page)
            if len(page) < _PAGE:
                return read_leases(kvs, stamp)
            start = page[-1].key + b"\0"

    def now(self) -> datetime:
        """The cluster's time: this machine's clock, never earlier than the last commit seen.

        etcd has no clock in its API. Floored by the ``at`` of the newest head this process
        has read (a transaction starts from the latest head it knows, and commits only if
        no server moved it since), time never runs backwards across servers: a decision
        committed by a server whose clock runs ahead is never contradicted by one whose
        clock lags. Keep the servers' clocks NTP-synchronized; the PostgreSQL store reads
        the database's clock instead. Costs no round trip.
        """
        local = datetime.now(UTC)
        floor = self._last_at
        return max(local, floor) if floor is not None else local

    def last_time(self) -> str | None:
        """The ``at`` of the newest commit this process has seen (the floor of lease time)."""
        return format_time(self._last_at) if self._last_at is not None else None

    # ------------------------------------------------------------------ wake-ups

    def listen(self, fn: Callable[[int], None]) -> Callable[[], None]:
        """Call ``fn(seq)`` whenever any server moves the head (an etcd watch).

        ``fn`` runs on the store's loop thread and must not block; ``fn(0)`` after the
        watch was re-established (a member failed, or the watched revision was
        compacted): events may have been committed meanwhile.
        """
        unlisten = self._listeners.listen(fn)
        with self._listen_lock:
            if self._watch_task is None:
                self._watch_task = self._connection.submit(self._watch())
        return unlisten

    async def _watch(self) -> None:
        head_key = self._keys.head
        while True:
            try:
                client = self._connection.client(self._connection.current)
                await client.connect()
                watch = await client.watch(head_key)
                self.watch_health.connected()
                self._listeners.publish(0)
                seen = -1
                async for event in watch:
                    seq = int(json.loads(event.kv.value)["seq"])
                    if seq != seen:  # a renewal moves the head's lease stamp, not its seq
                        self._listeners.publish(seq)
                    seen = seq
                raise ConnectionError("the watch stream ended")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # member gone, no leader, compaction: re-watch elsewhere
                endpoint = str(self._connection.current)
                self._connection.skip(self._connection.current)
                delay = self.watch_health.failed(exc, endpoint)
            await asyncio.sleep(delay)

    def close(self) -> None:
        async def shutdown() -> None:
            if self._watch_task is not None:
                self._watch_task.cancel()
            await self._connection.close_clients()

        try:
            self._connection.run(shutdown(), timeout=10)
        finally:
            self._connection.stop()
