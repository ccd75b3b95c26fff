"""Projection snapshots in the etcd store.

Keys (``P`` = the URL's prefix)::

    /P/snapshots/<repo>                          {"seq", "hash", "version", "digest",
                                                  "chunks"}: the manifest
    /P/snapshot-chunks/<repo>/<seq>/<n>          the body, in :data:`CHUNK_BYTES` pieces

A snapshot can be larger than one etcd request may be (``--max-request-bytes``, 1.5 MiB
by default), so its body is written in chunks first, each its own put, and the manifest
last, by a ``Txn`` that compares the manifest's ``mod_revision`` with the one read (two
servers saving at once: the later event wins, the other gives way). Chunks of older
snapshots are deleted afterwards. A reader that loses a race with that delete reads a
body that fails its digest, and replays instead (a snapshot is a cache, never trusted
unchecked).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import aetcd
from aetcd import rpc

from detente.eventlog.snapshots import Snapshot
from detente.storage.etcd_connection import RPC_TIMEOUT, EtcdConnection
from detente.storage.etcd_layout import EtcdKeys, prefix_end

T = TypeVar("T")

#: Bytes per chunk of a snapshot body (well under etcd's default 1.5 MiB request limit).
CHUNK_BYTES = 512 * 1024


class EtcdSnapshots:
    """``load_snapshot``/``save_snapshot`` for :class:`~detente.storage.etcd.EtcdStore`."""

    _keys: EtcdKeys
    _connection: EtcdConnection

    async def _call(self, op: Callable[[aetcd.Client], Awaitable[T]]) -> T:
        raise NotImplementedError

    def _manifest_key(self, repo: str) -> bytes:
        return self._keys.key("snapshots", repo)

    def _chunks(self, repo: str) -> bytes:
        return self._keys.key("snapshot-chunks", repo) + b"/"

    def _chunk_prefix(self, repo: str, seq: int) -> bytes:
        return self._chunks(repo) + b"%020d/" % seq

    def _get(self, key: bytes, end: bytes = b"") -> list[Any]:
        async def op(client: aetcd.Client) -> list[Any]:
            request = rpc.RangeRequest(key=key, range_end=end)
            reply = await client.kvstub.Range(
                request, timeout=RPC_TIMEOUT, metadata=client.metadata
            )
            return list(reply.kvs)

        return self._connection.run(self._call(op))

    def load_snapshot(self, repo: str) -> Snapshot | None:
        """See :meth:`detente.storage.base.SnapshotStore.load_snapshot`."""
        kvs = self._get(self._manifest_key(repo))
        if not kvs:
            return None
        m = json.loads(kvs[0].value)
        prefix = self._chunk_prefix(repo, int(m["seq"]))
        body = b"".join(kv.value for kv in self._get(prefix, prefix_end(prefix)))
        return Snapshot(repo, int(m["seq"]), m["hash"], m["version"], m["digest"], body)

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """See :meth:`detente.storage.base.SnapshotStore.save_snapshot`."""
        repo, key = snapshot.repo, self._manifest_key(snapshot.repo)
        kvs = self._get(key)
        if kvs:
            held_manifest = json.loads(kvs[0].value)
            if (
                int(held_manifest["seq"]) >= snapshot.seq
                and held_manifest["version"] == snapshot.version
            ):
                return
        held = kvs[0].mod_revision if kvs else 0
        prefix = self._chunk_prefix(repo, snapshot.seq)
        body = snapshot.body
        pieces = [body[i : i + CHUNK_BYTES] for i in range(0, len(body), CHUNK_BYTES)] or [b""]
        for n, piece in enumerate(pieces):
            self._txn([], [_put(prefix + b"%06d" % n, piece)])
        manifest = json.dumps(
            {
                "seq": snapshot.seq,
                "hash": snapshot.hash,
                "version": snapshot.version,
                "digest": snapshot.digest,
                "chunks": len(pieces),
            }
        ).encode()
        compare = (
            aetcd.transactions.Version(key) == 0
            if not held
            else aetcd.transactions.Mod(key) == held
        )
        if not self._txn([compare.build_message()], [_put(key, manifest)]):
            # another server saved first: drop our chunks, unless it saved the same event
            now = self._get(key)
            if not now or int(json.loads(now[0].value)["seq"]) != snapshot.seq:
                self._txn([], [_delete(prefix, prefix_end(prefix))])
            return
        self._txn([], [_delete(self._chunks(repo), prefix)])  # older snapshots' chunks

    def _txn(self, compare: list[Any], success: list[Any]) -> bool:
        request = rpc.TxnRequest(compare=compare, success=success, failure=[])

        async def op(client: aetcd.Client) -> bool:
            reply = await client.kvstub.Txn(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
            return bool(reply.succeeded)

        return self._connection.run(self._call(op))


def _put(key: bytes, value: bytes) -> Any:
    return rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))


def _delete(start: bytes, end: bytes) -> Any:
    return rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=start, range_end=end))
