"""The etcd backend (``etcd://h1:p1,h2:p2,h3:p3[/prefix]``): the log on a consensus store.

Key layout (``P`` = the URL's prefix, default ``detente``; components URL-quoted)::

    /P/head                          {"seq", "hash", "at"} of the last event
    /P/events/<seq, 20 digits>       the stored event (JSON envelope)
    /P/repos/<repo>/events/<seq>     the same event again: per-repository reads in one range
    /P/streams/<subject>             the stream's revision ("7"): the CAS target
    /P/records/<kind>/<id>           the projection row (JSON)

Every command is ONE etcd ``Txn``: compare ``mod_revision(/P/head)`` with the value read
when the transaction began (so appends are serialized globally: one sequence, one hash
chain, in commit order) and every touched stream's revision with the expected one; on
success put the events, their per-repo copies, the stream revisions, the projection rows
and the new head together. A lost compare is :class:`~detente.errors.ConcurrencyError`
and the service retries on fresh state. That compare is also the fence: a server that
was partitioned or decided on a stale view cannot commit, whatever it believes.

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

aetcd is asyncio-only; :class:`EtcdStore` is a synchronous facade running it on a private
event loop thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import quote, unquote

import aetcd
import grpc
from aetcd import rpc

from detente.clock import parse_time
from detente.errors import ConcurrencyError, StoreError, ValidationError
from detente.eventlog.envelope import GENESIS_HASH, StoredEvent, seal
from detente.storage.base import NewEvent, RecordRow

T = TypeVar("T")

#: Seconds a request keeps failing over across endpoints before ``store_unavailable``.
FAILOVER_SECONDS = 20.0
#: Seconds one RPC may take (gRPC deadline).
RPC_TIMEOUT = 5.0
_PAGE = 500
_RETRYABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}


def parse_etcd_url(url: str) -> tuple[list[tuple[str, int]], str]:
    """``etcd://h1:p1,h2:p2/prefix`` -> ``([(h1, p1), (h2, p2)], "prefix")``.

    Raises:
        ValidationError: ``validation_error`` when no endpoint or a bad port is given.
    """
    rest = url.removeprefix("etcd://")
    hosts, _, prefix = rest.partition("/")
    endpoints: list[tuple[str, int]] = []
    for item in filter(None, hosts.split(",")):
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ValidationError(f"etcd endpoint {item!r} must be host:port", field="store")
        endpoints.append((host, int(port)))
    if not endpoints:
        raise ValidationError("etcd URL needs endpoints: etcd://host:port,...", field="store")
    return endpoints, prefix.strip("/") or "detente"


def _event_from_json(raw: bytes) -> StoredEvent:
    w = json.loads(raw)
    return StoredEvent(
        seq=w["seq"],
        id=w["id"],
        type=w["type"],
        version=w["version"],
        repo=w["repo"],
        subject=w["subject"],
        subject_revision=w["subjectRevision"],
        data=w["data"],
        at=w["at"],
        prev_hash=w["prevHash"],
        hash=w["hash"],
    )


def _put(key: bytes, value: bytes) -> Any:
    return rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))


def _prefix_end(prefix: bytes) -> bytes:
    return prefix[:-1] + bytes([prefix[-1] + 1])


class _Loop:
    """A private asyncio loop on a daemon thread; ``run`` is the sync bridge."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="detente-etcd", daemon=True
        )
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = FAILOVER_SECONDS + 10) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)


class _Head:
    def __init__(self, seq: int, hash: str, at: str | None, mod_revision: int, revision: int):
        self.seq, self.hash, self.at = seq, hash, at
        self.mod_revision = mod_revision  # of /P/head: the compare target
        self.revision = revision  # the store revision of the read: the tx snapshot


class _EtcdTx:
    def __init__(self, store: EtcdStore, head: _Head) -> None:
        self._store = store
        self.head = head
        self.events: list[StoredEvent] = []
        self.base: dict[str, int] = {}  # stream revisions at the snapshot (compare values)
        self.revisions: dict[str, int] = {}  # after this tx's own appends
        self.rows: dict[tuple[str, str], RecordRow] = {}

    def read_after(self, seq: int, repo: str) -> list[StoredEvent]:
        return self._store._range_events(
            self._store._repo_events(repo), since=seq, revision=self.head.revision
        )

    def _revision(self, subject: str) -> int:
        if subject in self.revisions:
            return self.revisions[subject]
        if subject not in self.base:
            self.base[subject] = self._store._stream_revision(subject, self.head.revision)
        return self.base[subject]

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
        last = self.events[-1] if self.events else None
        seq, prev = (last.seq, last.hash) if last else (self.head.seq, self.head.hash)
        out: list[StoredEvent] = []
        for event in events:
            rev = self._revision(event.subject) + 1
            self.revisions[event.subject] = rev
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
                    subject_revision=rev,
                    data=event.data,
                    at=event.at,
                )
            )
            prev = out[-1].hash
        self.events.extend(out)
        return out

    def upsert_records(self, rows: Sequence[RecordRow]) -> None:
        for row in rows:
            self.rows[(row.kind, row.id)] = row


class EtcdStore:
    """An etcd cluster shared by any number of detente servers (see the module docstring).

    Args:
        endpoints: ``(host, port)`` of each member's client URL.
        prefix: the key namespace (one detente installation per prefix).
        url: the URL this store was opened from (for display).

    Raises:
        StoreError: ``store_unavailable`` when no endpoint answers.
    """

    def __init__(
        self, endpoints: Sequence[tuple[str, int]], *, prefix: str = "detente", url: str = ""
    ) -> None:
        self.url = url or "etcd://" + ",".join(f"{h}:{p}" for h, p in endpoints) + f"/{prefix}"
        self._endpoints = list(endpoints)
        self._current = 0
        self._clients: dict[int, aetcd.Client] = {}
        self._p = f"/{quote(prefix, safe='')}/".encode()
        self._tx_lock = threading.Lock()  # this process's writers never conflict with each other
        self._listeners: dict[int, Callable[[int], None]] = {}
        self._listen_lock = threading.Lock()
        self._watch_task: concurrent.futures.Future[None] | None = None
        self._last_at: datetime | None = None
        self._loop = _Loop()
        self.head()  # fail fast when no member answers

    # ------------------------------------------------------------------ plumbing

    def _key(self, *parts: str) -> bytes:
        return self._p + "/".join(quote(p, safe="") for p in parts).encode()

    def _repo_events(self, repo: str) -> bytes:
        return self._key("repos", repo, "events") + b"/"

    def _client(self, index: int) -> aetcd.Client:
        client = self._clients.get(index)
        if client is None:
            host, port = self._endpoints[index]
            client = aetcd.Client(
                host=host,
                port=port,
                timeout=RPC_TIMEOUT,
                options={"grpc.max_receive_message_length": 64 * 1024 * 1024},
            )
            self._clients[index] = client
        return client

    async def _call(self, op: Callable[[aetcd.Client], Awaitable[T]]) -> T:
        """Run ``op`` on the current endpoint, failing over on unavailability."""
        deadline = time.monotonic() + FAILOVER_SECONDS
        attempt = 0
        while True:
            index = self._current
            client = self._client(index)
            try:
                await client.connect()
                return await op(client)
            except (grpc.aio.AioRpcError, aetcd.ClientError) as exc:
                retryable = isinstance(
                    exc, aetcd.ConnectionFailedError | aetcd.ConnectionTimeoutError
                ) or (isinstance(exc, grpc.aio.AioRpcError) and exc.code() in _RETRYABLE)
                if not retryable or time.monotonic() > deadline:
                    raise StoreError(f"etcd request failed: {exc}") from exc
            attempt += 1
            if self._current == index:
                self._current = (index + 1) % len(self._endpoints)
            await asyncio.sleep(min(0.05 * attempt, 0.5))

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
        start, end = prefix + b"%020d" % (since + 1), _prefix_end(prefix)
        while limit is None or len(out) < limit:
            page = _PAGE if limit is None else min(_PAGE, limit - len(out))
            kvs, _ = self._loop.run(self._range(start, end, limit=page, revision=revision))
            out.extend(_event_from_json(kv.value) for kv in kvs)
            if len(kvs) < page:
                break
            start = kvs[-1].key + b"\0"
        return out

    def _stream_revision(self, subject: str, revision: int) -> int:
        key = self._key("streams", subject)
        kvs, _ = self._loop.run(self._range(key, b"", revision=revision))
        return int(kvs[0].value) if kvs else 0

    def _read_head(self) -> _Head:
        kvs, revision = self._loop.run(self._range(self._key("head"), b""))
        if not kvs:
            return _Head(0, GENESIS_HASH, None, 0, revision)
        body = json.loads(kvs[0].value)
        self._see(body.get("at"))
        return _Head(body["seq"], body["hash"], body.get("at"), kvs[0].mod_revision, revision)

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
    def transaction(self, repo: str) -> Iterator[_EtcdTx]:
        """One optimistic unit of work, committed as a single etcd Txn on exit.

        Raises:
            ConcurrencyError: ``store_concurrency`` when another server committed first
                (the head moved) or a stream revision is not the expected one.
            StoreError: ``store_unavailable`` when no member answers in time.
        """
        with self._tx_lock:
            tx = _EtcdTx(self, self._read_head())
            yield tx
            if tx.events or tx.rows:
                self._loop.run(self._commit(tx))
                if tx.events:
                    self._see(tx.events[-1].at)

    async def _commit(self, tx: _EtcdTx) -> None:
        head_key = self._key("head")
        compare = [(aetcd.transactions.Mod(head_key) == tx.head.mod_revision).build_message()]
        for subject, base in tx.base.items():
            if subject in tx.revisions:
                key = self._key("streams", subject)
                check = (
                    aetcd.transactions.Version(key) == 0
                    if base == 0
                    else aetcd.transactions.Value(key) == str(base).encode()
                )
                compare.append(check.build_message())
        ops = []
        for e in tx.events:
            raw = json.dumps(e.to_wire(), sort_keys=True, ensure_ascii=False).encode()
            ops.append(_put(self._p + b"events/%020d" % e.seq, raw))
            ops.append(_put(self._repo_events(e.repo) + b"%020d" % e.seq, raw))
        for subject, rev in tx.revisions.items():
            ops.append(_put(self._key("streams", subject), str(rev).encode()))
        for row in tx.rows.values():
            body = {"repo": row.repo, "revision": row.revision, "status": row.status}
            body["body"] = row.body
            ops.append(_put(self._key("records", row.kind, row.id), json.dumps(body).encode()))
        if tx.events:
            last = tx.events[-1]
            head = {"seq": last.seq, "hash": last.hash, "at": last.at}
            ops.append(_put(head_key, json.dumps(head).encode()))
        request = rpc.TxnRequest(compare=compare, success=ops, failure=[])
        sent = False

        async def op(client: aetcd.Client) -> bool:
            nonlocal sent
            if sent and tx.events and await self._has_event(client, tx.events[0]):
                return True  # an earlier copy of this request was applied
            sent = True
            reply = await client.kvstub.Txn(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
            if reply.succeeded:
                return True
            return bool(tx.events) and await self._has_event(client, tx.events[0])

        if not await self._call(op):
            raise ConcurrencyError("another server appended first (the log head moved)")

    async def _has_event(self, client: aetcd.Client, event: StoredEvent) -> bool:
        request = rpc.RangeRequest(key=self._p + b"events/%020d" % event.seq)
        reply = await client.kvstub.Range(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
        return bool(reply.kvs) and _event_from_json(reply.kvs[0].value).id == event.id

    # ------------------------------------------------------------------ reads

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]:
        prefix = self._p + b"events/" if repo is None else self._repo_events(repo)
        return self._range_events(prefix, since=max(since, 0), limit=max(limit, 0))

    def iter_all(self, *, batch: int = 1000) -> Iterator[StoredEvent]:
        since = 0
        while chunk := self.read(since=since, limit=batch):
            yield from chunk
            since = chunk[-1].seq

    def head(self) -> tuple[int, str]:
        head = self._read_head()
        return head.seq, head.hash

    def records(self, kind: str, repo: str | None = None) -> list[RecordRow]:
        prefix = self._key("records", kind) + b"/"
        start, end, rows = prefix, _prefix_end(prefix), []
        while True:
            kvs, _ = self._loop.run(self._range(start, end, limit=_PAGE))
            for kv in kvs:
                body = json.loads(kv.value)
                record_id = kv.key[len(prefix) :].decode()
                row = RecordRow(
                    kind,
                    unquote(record_id),
                    body["repo"],
                    body["revision"],
                    body["status"],
                    body["body"],
                )
                if repo is None or row.repo == repo:
                    rows.append(row)
            if len(kvs) < _PAGE:
                return sorted(rows, key=lambda r: r.id)
            start = kvs[-1].key + b"\0"

    def now(self) -> datetime:
        """The cluster's time: this machine's clock, never earlier than the last commit seen.

        etcd has no clock in its API. Floored by the ``at`` of the newest head this process
        has read (every transaction reads the head first, so inside a transaction that is
        the cluster's latest commit), time never runs backwards across servers: a decision
        committed by a server whose clock runs ahead is never contradicted by one whose
        clock lags. Keep the servers' clocks NTP-synchronized; the PostgreSQL store reads
        the database's clock instead. Costs no round trip.
        """
        local = datetime.now(UTC)
        floor = self._last_at
        return max(local, floor) if floor is not None else local

    # ------------------------------------------------------------------ wake-ups

    def listen(self, fn: Callable[[int], None]) -> Callable[[], None]:
        """Call ``fn(seq)`` whenever any server moves the head (an etcd watch).

        ``fn`` runs on the store's loop thread and must not block; ``fn(0)`` after the
        watch was re-established (a member failed, or the watched revision was
        compacted): events may have been committed meanwhile.
        """
        with self._listen_lock:
            key = max(self._listeners, default=0) + 1
            self._listeners[key] = fn
            if self._watch_task is None:
                self._watch_task = asyncio.run_coroutine_threadsafe(self._watch(), self._loop.loop)

        def unlisten() -> None:
            with self._listen_lock:
                self._listeners.pop(key, None)

        return unlisten

    def _notify(self, seq: int) -> None:
        with self._listen_lock:
            listeners = list(self._listeners.values())
        for fn in listeners:
            fn(seq)

    async def _watch(self) -> None:
        head_key = self._key("head")
        while True:
            try:
                client = self._client(self._current)
                await client.connect()
                watch = await client.watch(head_key)
                self._notify(0)
                async for event in watch:
                    self._notify(int(json.loads(event.kv.value)["seq"]))
            except asyncio.CancelledError:
                raise
            except Exception:  # member gone, no leader, compaction: re-watch elsewhere
                self._current = (self._current + 1) % len(self._endpoints)
            await asyncio.sleep(0.2)

    def close(self) -> None:
        async def shutdown() -> None:
            if self._watch_task is not None:
                self._watch_task.cancel()
            for client in self._clients.values():
                try:
                    await asyncio.wait_for(client.close(), 2)
                except Exception:  # closing a channel to a dead member
                    continue

        try:
            self._loop.run(shutdown(), timeout=10)
        finally:
            self._loop.stop()
