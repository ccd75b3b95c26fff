"""The replay ledger (:mod:`detente.storage.ledger`) in an etcd store's cluster.

Keys ``/<prefix>/ledger/<key>`` hold ``{"value": base64, "expiresAt": seconds}``; an
expired entry counts as absent. "First use" is one ``Txn`` per attempt: compare the
key's ``mod_revision`` with the one just read (0 when absent) and put; a lost compare
means another server wrote the key first, i.e. a reuse. Entries are not deleted when
they expire (etcd has no clock of ours); each is overwritten on its key's next use.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import aetcd
from aetcd import rpc

from detente.storage.etcd import parse_etcd_url
from detente.storage.etcd_connection import FAILOVER_SECONDS, RPC_TIMEOUT, EtcdConnection

__all__ = ["EtcdLedger"]


class EtcdLedger:
    """The ledger under ``/<prefix>/ledger/`` of an etcd cluster.

    Args:
        url: the store's ``etcd://host:port,.../prefix`` URL.
    """

    def __init__(self, url: str) -> None:
        endpoints, prefix = parse_etcd_url(url)
        self._prefix = f"/{prefix.strip('/')}/ledger/".encode()
        self._connection = EtcdConnection(endpoints)

    def _key(self, key: str) -> bytes:
        return self._prefix + key.encode()

    async def _read(self, client: aetcd.Client, key: bytes) -> tuple[dict[str, Any] | None, int]:
        request = rpc.RangeRequest(key=key)
        reply = await client.kvstub.Range(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
        if not reply.kvs:
            return None, 0
        return json.loads(reply.kvs[0].value), int(reply.kvs[0].mod_revision)

    def _put_if(self, key: bytes, mod_revision: int, entry: dict[str, Any]) -> Any:
        compare = [(aetcd.transactions.Mod(key) == mod_revision).build_message()]
        put = rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=json.dumps(entry).encode()))
        return rpc.TxnRequest(compare=compare, success=[put], failure=[])

    def first_use(self, key: str, *, now: float, expires_at: float) -> bool:
        raw = self._key(key)

        async def op(client: aetcd.Client) -> bool:
            entry, mod = await self._read(client, raw)
            if entry is not None and float(entry["expiresAt"]) > now:
                return False
            request = self._put_if(raw, mod, {"value": "", "expiresAt": expires_at})
            reply = await client.kvstub.Txn(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
            return bool(reply.succeeded)

        return self._connection.run(self._connection.call(op, failover_seconds=FAILOVER_SECONDS))

    def put(self, key: str, value: bytes, *, expires_at: float) -> None:
        raw = self._key(key)
        entry = {"value": base64.b64encode(value).decode(), "expiresAt": expires_at}

        async def op(client: aetcd.Client) -> None:
            request = rpc.PutRequest(key=raw, value=json.dumps(entry).encode())
            await client.kvstub.Put(request, timeout=RPC_TIMEOUT, metadata=client.metadata)

        self._connection.run(self._connection.call(op, failover_seconds=FAILOVER_SECONDS))

    def get(self, key: str, *, now: float) -> bytes | None:
        raw = self._key(key)

        async def op(client: aetcd.Client) -> bytes | None:
            entry, _ = await self._read(client, raw)
            if entry is None or float(entry["expiresAt"]) <= now:
                return None
            return base64.b64decode(entry["value"])

        return self._connection.run(self._connection.call(op, failover_seconds=FAILOVER_SECONDS))

    def close(self) -> None:
        try:
            self._connection.run(self._connection.close_clients(), timeout=10)
        finally:
            self._connection.stop()
