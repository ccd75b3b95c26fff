"""SQLite-specific guarantees: append-only at the storage level, survives kill -9."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from detente.storage.base import NewEvent
from detente.storage.sqlite import SqliteStore


def test_the_events_table_refuses_updates_and_deletes(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d.db")
    with store.transaction("demo") as tx:
        tx.append(
            [NewEvent("e1", "claim.announced", 1, "demo", "claim/c", {}, "t")], {"claim/c": 0}
        )
    store.close()
    conn = sqlite3.connect(tmp_path / "d.db")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE events SET data = '{}' WHERE seq = 1")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM events")
    conn.close()


def test_every_acknowledged_claim_survives_a_kill_9_of_the_writer(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    script = textwrap.dedent(
        f"""
        import sys
        from detente.clock import SystemClock
        from detente.domain.claims.commands import OpenClaim
        from detente.domain.claims.model import Agent
        from detente.service import RepoConfig, Service
        from detente.storage.sqlite import SqliteStore
        svc = Service(SqliteStore({str(db)!r}), SystemClock(), [RepoConfig("demo")])
        i = 0
        while True:
            c = svc.claims.open_claim(OpenClaim(repo="demo", objective="w", base_commit="a" * 40,
                agent=Agent("w", "w"), lease_ttl_seconds=600, paths=(f"f{{i}}.py",)))
            print(c.claim.id, flush=True)
            i += 1
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    acknowledged = [proc.stdout.readline().strip() for _ in range(30)]
    proc.kill()
    proc.wait(timeout=10)
    from detente.clock import SystemClock
    from detente.service import RepoConfig, Service

    svc = Service(SqliteStore(db), SystemClock(), [RepoConfig("demo")])
    ids = {c.id for c in svc.claims.list_claims()}
    assert set(acknowledged) <= ids
    report = svc.audit()
    assert report.ok, report.to_wire()
