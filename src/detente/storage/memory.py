"""The in-memory reference backend (``memory://``): the contract every backend meets.

One process-wide lock serializes transactions; appends are buffered and published only
when the transaction commits, so a failed command leaves nothing behind.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

from detente.errors import ConcurrencyError
from detente.eventlog.envelope import GENESIS_HASH, StoredEvent
from detente.eventlog.snapshots import Snapshot
from detente.storage.append import BufferedTx
from detente.storage.base import LeaseRow, RecordRow


class _MemoryTx(BufferedTx):
    def __init__(self, store: MemoryStore) -> None:
        super().__init__(store.head(), lambda subject: store._revisions.get(subject, 0))
        self._store = store
        self.leases: dict[str, LeaseRow] = {}
        self.stamp = store._lease_stamp

    def read_after(self, seq: int, repo: str) -> list[StoredEvent]:
        return [e for e in self._store._events[seq:] if e.repo == repo]

    def leases_after(self, stamp: int, repo: str) -> list[LeaseRow]:
        return self._store.leases_after(stamp, repo)

    def write_leases(self, rows: Sequence[LeaseRow]) -> list[LeaseRow]:
        out: list[LeaseRow] = []
        for row in rows:
            held = self.leases.get(row.claim_id) or self._store._leases.get(row.claim_id)
            if held is not None and held.revision >= row.revision:
                raise ConcurrencyError(
                    f"the lease of claim {row.claim_id} is at revision {held.revision}, "
                    f"not below {row.revision}",
                    subject=f"claim/{row.claim_id}",
                    expected=row.revision - 1,
                    actual=held.revision,
                )
            self.stamp += 1
            stored = replace(row, stamp=self.stamp)
            self.leases[row.claim_id] = stored
            out.append(stored)
        return out


class MemoryStore:
    """Events and projection rows in process memory; lost when the process ends."""

    def __init__(self, url: str = "memory://") -> None:
        self.url = url
        self._lock = threading.RLock()
        self._events: list[StoredEvent] = []
        self._revisions: dict[str, int] = {}
        self._rows: dict[tuple[str, str], RecordRow] = {}
        self._snapshots: dict[str, Snapshot] = {}
        self._leases: dict[str, LeaseRow] = {}
        self._lease_stamp = 0

    @contextmanager
    def transaction(self, repo: str) -> Iterator[_MemoryTx]:
        with self._lock:
            tx = _MemoryTx(self)
            yield tx
            self._events.extend(tx.events)
            self._revisions.update(tx.revisions)
            self._rows.update(tx.rows)
            self._leases.update(tx.leases)
            self._lease_stamp = tx.stamp

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]:
        with self._lock:
            tail = self._events[max(since, 0) :]
        if repo is not None:
            tail = [e for e in tail if e.repo == repo]
        return tail[: max(limit, 0)]

    def iter_all(self, *, batch: int = 1000) -> Iterator[StoredEvent]:
        with self._lock:
            snapshot = list(self._events)
        yield from snapshot

    def head(self) -> tuple[int, str]:
        with self._lock:
            if not self._events:
                return 0, GENESIS_HASH
            last = self._events[-1]
            return last.seq, last.hash

    def records(self, kind: str, repo: str | None = None) -> list[RecordRow]:
        with self._lock:
            rows = [r for (k, _), r in self._rows.items() if k == kind]
        return [r for r in rows if repo is None or r.repo == repo]

    def leases_after(self, stamp: int, repo: str) -> list[LeaseRow]:
        with self._lock:
            rows = [r for r in self._leases.values() if r.repo == repo and r.stamp > stamp]
        return sorted(rows, key=lambda r: r.stamp)

    def load_snapshot(self, repo: str) -> Snapshot | None:
        with self._lock:
            return self._snapshots.get(repo)

    def save_snapshot(self, snapshot: Snapshot) -> None:
        with self._lock:
            held = self._snapshots.get(snapshot.repo)
            if held is None or held.seq < snapshot.seq or held.version != snapshot.version:
                self._snapshots[snapshot.repo] = snapshot

    def close(self) -> None:
        return None
