"""Lease rows on the etcd store: each claim's current lease, moved by compare-and-swap.

A renewal that only moves a deadline writes its claim's key ``/P/leases/<repo>/<claim>``
instead of appending a chained event (``docs/architecture.md``, "Heartbeats that cost
what they change"), in the same ``Txn`` as the rest of the batch:

- at commit the written claims' keys are read (one read-only ``Txn`` per transaction, not
  per renewal; none for the keys this store's own last commits wrote, when it starts
  from the head they left), a stored row above the revision the new one extends is refused, and each
  key is compared in the commit's ``Txn`` with the ``mod_revision`` just read (0: absent),
  so a row written meanwhile by another server fails the commit;
- the row's ``stamp`` is the store's change counter for lease rows, kept in the head
  (``/P/head``'s ``leaseStamp``), so a commit that moves a lease rewrites the head. Every
  commit compares ``mod_revision(/P/head)``: a server that has not seen another server's
  renewal loses its compare and never expires a renewed lease on a stale view.

A reader folds the rows of a repository with a stamp above the highest it has seen (one
``Range`` of the repository's lease keys, filtered here; none when the head's stamp is not
above it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import aetcd
from aetcd import rpc

from detente.errors import ConcurrencyError
from detente.eventlog.records import LeaseRow
from detente.storage.etcd_connection import RPC_TIMEOUT
from detente.storage.etcd_layout import EtcdKeys, lease_from_json, lease_to_json

__all__ = ["EtcdLeaseWrites", "read_leases"]


def read_leases(kvs: Sequence[Any], stamp: int) -> list[LeaseRow]:
    """The lease rows among the key-values ``kvs`` with a stamp above ``stamp``, by stamp."""
    rows = [lease_from_json(kv.value) for kv in kvs]
    return sorted((r for r in rows if r.stamp > stamp), key=lambda r: r.stamp)


class EtcdLeaseWrites:
    """The lease rows one etcd transaction writes (compared and put in its ``Txn``).

    Args:
        keys: the store's key layout.
        stamp: the head's lease stamp the transaction started from.
        known: ``claim -> (revision, mod_revision)`` of the lease keys this store's own
            last commits wrote, when the transaction starts from the head they left (the
            head compare makes them exact: another server's lease write moves the head);
            those claims' keys are not read.
    """

    def __init__(
        self, keys: EtcdKeys, stamp: int, known: Mapping[str, tuple[int, int]] | None = None
    ) -> None:
        self._keys = keys
        self._known = known or {}
        self.start = stamp
        #: The highest stamp assigned (the head's ``leaseStamp`` after the commit).
        self.stamp = stamp
        self.rows: dict[str, LeaseRow] = {}
        self._mods: dict[str, int] = {}  # claim -> mod_revision of its key when read (0: absent)
        self._base: dict[str, int] = {}  # claim -> the revision its first row extends

    def write(self, rows: Sequence[LeaseRow]) -> list[LeaseRow]:
        """See :meth:`detente.storage.base.LeaseTx.write_leases` (no round trip: the stored
        rows are read and compared once per transaction, by :meth:`check`, at commit)."""
        out: list[LeaseRow] = []
        for row in rows:
            held = self.rows.get(row.claim_id)
            if held is not None and held.revision >= row.revision:
                raise ConcurrencyError(
                    f"the lease of claim {row.claim_id} moved twice to revision {row.revision}"
                )
            self._base.setdefault(row.claim_id, row.revision - 1)
            self.stamp += 1
            moved = replace(row, stamp=self.stamp)
            self.rows[row.claim_id] = moved
            out.append(moved)
        return out

    async def check(self, client: aetcd.Client) -> None:
        """Read the stored rows of the written claims (one read-only ``Txn``), refuse one
        above the revision its claim's first row extends, and keep each key's
        ``mod_revision`` for :meth:`compares` (0: absent).

        Raises:
            ConcurrencyError: ``store_concurrency`` when a stored row is already at or
                above a written revision (another writer renewed first).
        """
        for claim in self.rows:
            if claim in self._known:
                revision, self._mods[claim] = self._known[claim]
                self._refuse_above(claim, revision)
        claims = [c for c in self.rows if c not in self._known]
        if not claims:
            return
        keys = [self._keys.lease(self.rows[c].repo, c) for c in claims]
        ranges = [rpc.RequestOp(request_range=rpc.RangeRequest(key=k)) for k in keys]
        request = rpc.TxnRequest(compare=[], success=ranges, failure=[])
        reply = await client.kvstub.Txn(request, timeout=RPC_TIMEOUT, metadata=client.metadata)
        for claim, answer in zip(claims, reply.responses, strict=True):
            kvs = answer.response_range.kvs
            self._mods[claim] = int(kvs[0].mod_revision) if kvs else 0
            if kvs:
                self._refuse_above(claim, lease_from_json(kvs[0].value).revision)

    def _refuse_above(self, claim: str, held: int) -> None:
        if held > self._base[claim]:
            raise ConcurrencyError(
                f"the lease of claim {claim} is at revision {held}, expected {self._base[claim]}",
                subject=f"claim/{claim}",
                expected=self._base[claim],
                actual=held,
            )

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
