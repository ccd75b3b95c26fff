"""Projection snapshots in the SQL stores: one row per repository in ``snapshots``.

The row is replaced only by a snapshot of a later event or of another version
(``ON CONFLICT ... WHERE``), so two servers saving at once keep the newer one, and a new
release replaces the old release's snapshot without waiting for a new event. The write is
its own short statement, outside any command's transaction (it never holds the append
lock).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from detente.eventlog.snapshots import Snapshot
from detente.storage.sql import Dialect

_SELECT = "SELECT repo, seq, hash, version, digest, body FROM snapshots WHERE repo = ?"
_UPSERT = (
    "INSERT INTO snapshots (repo, seq, hash, version, digest, body) VALUES (?,?,?,?,?,?) "
    "ON CONFLICT (repo) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, "
    "version = excluded.version, digest = excluded.digest, body = excluded.body "
    "WHERE snapshots.seq < excluded.seq OR snapshots.version <> excluded.version"
)


class SqlSnapshots:
    """``load_snapshot``/``save_snapshot`` (:class:`detente.storage.base.SnapshotStore`)
    on top of a SQL store's ``_fetch`` and ``_write``."""

    dialect: Dialect

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _write(self, sql: str, params: Sequence[Any]) -> None:
        raise NotImplementedError

    def load_snapshot(self, repo: str) -> Snapshot | None:
        """See :meth:`detente.storage.base.SnapshotStore.load_snapshot`."""
        rows = self._fetch(self.dialect.sql(_SELECT), (repo,))
        if not rows:
            return None
        r = rows[0]
        return Snapshot(str(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]), bytes(r[5]))

    def save_snapshot(self, snapshot: Snapshot) -> None:
        """See :meth:`detente.storage.base.SnapshotStore.save_snapshot`."""
        s = snapshot
        self._write(self.dialect.sql(_UPSERT), (s.repo, s.seq, s.hash, s.version, s.digest, s.body))
