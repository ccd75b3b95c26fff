"""Lease rows on the etcd store: each claim's current lease, moved by compare-and-swap.

A renewal that only moves a deadline writes its claim's key ``/P/leases/<repo>/<claim>``
instead of appending a chained event (``docs/architecture.md``, "Heartbeats that cost
what they change"), in the same ``Txn`` as the rest of the batch:

- the key is compared with the ``mod_revision`` it had when the transaction read it (0:
  absent), so a row written meanwhile by another server fails the commit;
- the row's ``stamp`` is the store's change counter for lease rows, kept in the head
  (``/P/head``'s ``leaseStamp``), so a commit that moves a lease rewrites the head. Every
  commit compares ``mod_revision(/P/head)``: a server that has not seen another server's
  renewal loses its compare and never expires a renewed lease on a stale view.

A reader folds the rows of a repository with a stamp above the highest it has seen (one
``Range`` of the repository's lease keys, filtered here; none when the head's stamp is not
above it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

import aetcd
from aetcd import rpc

from detente.errors import ConcurrencyError
from detente.eventlog.records import LeaseRow
from detente.storage.etcd_connection import RPC_TIMEOUT
from detente.storage.etcd_layout import EtcdKeys, lease_from_json, lease_to_json

__all__ = ["EtcdLeaseWrites", "read_leases"]

#: Runs an async operation on a client of the store (with failover) and waits for it.
Run = Callable[[Callable[[aetcd.Client], Awaitable[Any]]], Any]


def read_leases(kvs: Sequence[Any], stamp: int) -> list[LeaseRow]:
    """The lease rows among the key-values ``kvs`` with a stamp above ``stamp``, by stamp."""
    rows = [lease_from_json(kv.value) for kv in kvs]
    return sorted((r for r in rows if r.stamp > stamp), key=lambda r: r.stamp)


class EtcdLeaseWrites:
    """The lease rows one etcd transaction writes (compared and put in its ``Txn``).

    Args:
        keys: the store's key layout.
        run: runs an operation on a client of the store (the reads of the stored rows).
        stamp: the head's lease stamp the transaction started from.
    """

    def __init__(self, keys: EtcdKeys, run: Run, stamp: int) -> None:
        self._keys = keys
        self._run = run
        self.start = stamp
        #: The highest stamp assigned (the head's ``leaseStamp`` after the commit).
        self.stamp = stamp
        self.rows: dict[str, LeaseRow] = {}
        self._mods: dict[str, int] = {}  # claim -> mod_revision of its key when read (0: absent)

    def _read(self, rows: Sequence[LeaseRow]) -> dict[str, tuple[LeaseRow, int]]:
        """The stored rows of the claims of ``rows`` not read yet (one read-only Txn):
        ``claim -> (row, mod_revision)``."""
        wanted = {r.claim_id: self._keys.lease(r.repo, r.claim_id) for r in rows}
        wanted = {c: k for c, k in wanted.items() if c not in self._mods}
        if not wanted:
            return {}
        claims = list(wanted)
        ranges = [rpc.RequestOp(request_range=rpc.RangeRequest(key=wanted[c])) for c in claims]

        async def op(client: aetcd.Client) -> list[Any]:
            request = rpc.TxnRequest(compare=[], success=ranges, failure=[])
            reply = await client.kvstub.Txn(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
            return [r.response_range.kvs for r in reply.responses]

        found: dict[str, tuple[LeaseRow, int]] = {}
        for claim, kvs in zip(claims, self._run(op), strict=True):
            self._mods[claim] = int(kvs[0].mod_revision) if kvs else 0
            if kvs:
                found[claim] = (lease_from_json(kvs[0].value), int(kvs[0].mod_revision))
        return found

    def write(self, rows: Sequence[LeaseRow]) -> list[LeaseRow]:
        """See :meth:`detente.storage.base.LeaseTx.write_leases` (the stored rows are read
        now and their ``mod_revision`` compared at commit)."""
        stored = self._read(rows)
        out: list[LeaseRow] = []
        for row in rows:
            held = self.rows.get(row.claim_id) or stored.get(row.claim_id, (None, 0))[0]
            if held is not None and held.revision >= row.revision:
                raise ConcurrencyError(
                    f"the lease of claim {row.claim_id} is at revision {held.revision}, "
                    f"not below {row.revision}",
                    subject=f"claim/{row.claim_id}",
                    expected=row.revision - 1,
                    actual=held.revision,
                )
            self.stamp += 1
            moved = replace(row, stamp=self.stamp)
            self.rows[row.claim_id] = moved
            out.append(moved)
        return out

    def compares(self) -> list[Any]:
        """One compare per written claim: its key's ``mod_revision`` is still the one read."""
        return [
            (
                aetcd.transactions.Mod(self._keys.lease(r.repo, r.claim_id)) == self._mods[c]
            ).build_message()
            for c, r in self.rows.items()
        ]

    def puts(self) -> list[Any]:
        """One put per written claim: its row as stored."""
        return [
            rpc.RequestOp(
                request_put=rpc.PutRequest(
                    key=self._keys.lease(r.repo, r.claim_id), value=lease_to_json(r)
                )
            )
            for r in self.rows.values()
        ]

    async def applied(self, client: aetcd.Client) -> bool:
        """True when the stored row of the first written claim is this transaction's (an
        earlier copy of a lease-only commit was applied, its reply lost)."""
        first = next(iter(self.rows.values()))
        request = rpc.RangeRequest(key=self._keys.lease(first.repo, first.claim_id))
        reply = await client.kvstub.Range(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
        return bool(reply.kvs) and lease_from_json(reply.kvs[0].value) == first
