"""One etcd transaction: what it buffers, and the ``Txn`` that commits it.

The transaction starts from a :class:`~detente.storage.etcd_head.Head` and reads at that
head's store revision; its commit (:func:`txn_request`) compares ``mod_revision(/P/head)``
with the head, every moved stream with its base revision and every moved lease key with
the ``mod_revision`` it was read at, and on success puts the events, their per-repository
copies, the stream revisions, the projection rows, the lease rows and the new head (see
:mod:`detente.storage.etcd`, :mod:`detente.storage.etcd_leases`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import aetcd
from aetcd import rpc

from detente.eventlog.envelope import NewEvent, StoredEvent
from detente.storage.append import BufferedTx
from detente.storage.base import LeaseRow
from detente.storage.etcd_head import Head
from detente.storage.etcd_layout import EtcdKeys, event_to_json, head_to_json, record_to_json
from detente.storage.etcd_leases import EtcdLeaseWrites

__all__ = ["EtcdTx", "txn_request"]


def _put(key: bytes, value: bytes) -> Any:
    return rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))


class EtcdTx(BufferedTx):
    """The unit of work of :meth:`EtcdStore.transaction
    <detente.storage.etcd.EtcdStore.transaction>`.

    Args:
        head: the head it starts from (its reads are made at ``head.revision``).
        keys: the store's key layout.
        stream_revision: ``subject -> revision`` at the head's store revision.
        range_events: ``(repo, since) -> events`` of one repository after ``since``.
        leases_after: ``(stamp, repo) -> lease rows`` above ``stamp``.
        known: the lease keys this store's own last commits wrote (see
            :class:`~detente.storage.etcd_leases.EtcdLeaseWrites`).
    """

    def __init__(
        self,
        head: Head,
        keys: EtcdKeys,
        stream_revision: Callable[[str], int],
        range_events: Callable[[str, int], list[StoredEvent]],
        leases_after: Callable[[int, str], list[LeaseRow]],
        known: Mapping[str, tuple[int, int]] | None = None,
    ) -> None:
        super().__init__((head.seq, head.hash), stream_revision)
        self.head = head
        self.leases = EtcdLeaseWrites(keys, head.lease_stamp, known)
        self._range_events = range_events
        self._leases_after = leases_after

    def leases_after(self, stamp: int, repo: str) -> list[LeaseRow]:
        if stamp >= self.head.lease_stamp:  # no lease moved since the caller looked: no RPC
            return []
        return self._leases_after(stamp, repo)

    def write_leases(self, rows: Sequence[LeaseRow]) -> list[LeaseRow]:
        return self.leases.write(rows)

    def append(self, events: Sequence[NewEvent], expected: Mapping[str, int]) -> list[StoredEvent]:
        # The commit compares every stream it moves with its base revision (and the head),
        # so the caller's expected revision stands in for a read of the stream: one round
        # trip fewer per subject, and a wrong one still fails, at the compare.
        for subject, want in expected.items():
            if subject not in self.base and subject not in self.revisions:
                self.base[subject] = want
        return super().append(events, expected)

    def read_after(self, seq: int, repo: str) -> list[StoredEvent]:
        if seq >= self.head.seq:  # nobody committed since the caller last looked: no RPC
            return []
        return self._range_events(repo, seq)


def txn_request(tx: EtcdTx, keys: EtcdKeys) -> tuple[list[Any], list[Any]]:
    """``(compare, success ops)`` of the ``Txn`` committing ``tx`` (see the module
    docstring); the head is rewritten when events are appended or a lease moved."""
    compare = [(aetcd.transactions.Mod(keys.head) == tx.head.mod_revision).build_message()]
    for subject, base in tx.base.items():
        if subject in tx.revisions:
            key = keys.stream(subject)
            check = (
                aetcd.transactions.Version(key) == 0
                if base == 0
                else aetcd.transactions.Value(key) == str(base).encode()
            )
            compare.append(check.build_message())
    ops = []
    for e in tx.events:
        raw = event_to_json(e)
        ops.append(_put(keys.event(e.seq), raw))
        ops.append(_put(keys.repo_event(e.repo, e.seq), raw))
    for subject, rev in tx.revisions.items():
        ops.append(_put(keys.stream(subject), str(rev).encode()))
    for row in tx.rows.values():
        ops.append(_put(keys.record(row.kind, row.id), record_to_json(row)))
    compare.extend(tx.leases.compares())
    ops.extend(tx.leases.puts())
    if tx.events or tx.leases.rows:
        last = tx.events[-1] if tx.events else None
        seq, hash_ = (last.seq, last.hash) if last else (tx.head.seq, tx.head.hash)
        at = last.at if last else tx.head.at
        ops.append(_put(keys.head, head_to_json(seq, hash_, at, tx.leases.stamp)))
    return compare, ops
