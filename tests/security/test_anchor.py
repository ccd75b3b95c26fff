"""The log anchored outside its store: a restored older copy of the SQLite file (a
rollback) and a rewritten event with its chain recomputed (a consistent rewrite) both
fail ``audit verify``, and fencing tokens never repeat after a rollback.

Against a real ``detente serve`` of a real bare repository with the hooks installed, and
its real SQLite file; the attacker has the store file, not the anchor key.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from served_git import Shared, detente, git, make_shared, open_claim, push, ready, serving

from detente.eventlog.envelope import compute_hash
from detente.service.anchor import CHECKPOINT_REF

from support import isolate_environment


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Shared:
    isolate_environment(tmp_path, monkeypatch)
    return make_shared(tmp_path)


def _audit(shared: Shared) -> dict[str, Any]:
    done = detente("--repo", str(shared.server), "audit", "verify", "--json")
    report: dict[str, Any] = json.loads(done.stdout)
    assert (done.returncode == 0) == report["ok"], done.stderr
    return report


def _copy(store: Path, to: Path) -> None:
    to.mkdir()
    for name in ("detente.db", "detente.db-wal", "detente.db-shm"):
        if (store.parent / name).exists():
            shutil.copy2(store.parent / name, to / name)


def _restore(copy: Path, store: Path) -> None:
    for name in ("detente.db", "detente.db-wal", "detente.db-shm"):
        (store.parent / name).unlink(missing_ok=True)
        if (copy / name).exists():
            shutil.copy2(copy / name, store.parent / name)


@pytest.mark.slow  # three served processes, four pushes through the hooks
def test_a_restored_older_store_fails_the_audit_and_its_fencing_tokens_are_never_reissued(
    shared: Shared, tmp_path: Path
) -> None:
    with serving(shared) as url:
        first = open_claim(url, shared, "a.py")
    _copy(shared.store, tmp_path / "copy")
    with serving(shared) as url:
        landed = open_claim(url, shared, "b.py")
        head = ready(url, shared, landed, "b.py")
        pushed = push(shared.work, f"{head}:refs/heads/main")
        assert pushed.returncode == 0, pushed.stderr
        shared.fetch()
    assert git(shared.server, "rev-parse", "origin/main") == head
    untouched = _audit(shared)
    assert untouched["ok"] is True, untouched  # the untouched store agrees with its anchors

    _restore(tmp_path / "copy", shared.store)
    report = _audit(shared)

    assert report["ok"] is False
    assert "brokenAt" not in report and "projectionMismatches" not in report  # a sound chain
    findings = report["anchorViolations"]
    assert any(f.startswith("rollback: the store ends at event") for f in findings), findings
    assert any(landed["id"] in f and "missing from the log" in f for f in findings), findings
    with serving(shared) as url:
        after = open_claim(url, shared, "c.py")
    assert after["fencingToken"] > max(first["fencingToken"], landed["fencingToken"])


def _rewrite(store: Path, seq: int, principal: str) -> None:
    """What an attacker with the file does: drop the append-only triggers, change one
    event's actor, recompute every hash from there (the chain verifies again)."""
    db = sqlite3.connect(store)
    db.execute("DROP TRIGGER events_no_update")
    rows = db.execute(
        "SELECT seq, id, type, version, repo, subject, subject_revision, data, at, prev_hash"
        " FROM events WHERE seq >= ? ORDER BY seq",
        (seq,),
    ).fetchall()
    prev = rows[0][9]
    for s, eid, kind, version, repo, subject, revision, data, at, _ in rows:
        payload = json.loads(data)
        if s == seq:
            payload["actor"] = {**payload["actor"], "principal": principal}
        fields = {
            "seq": s,
            "id": eid,
            "type": kind,
            "version": version,
            "repo": repo,
            "subject": subject,
            "subject_revision": revision,
            "data": payload,
            "at": at,
            "prev_hash": prev,
        }
        digest = compute_hash(**fields)
        db.execute(
            "UPDATE events SET data = ?, prev_hash = ?, hash = ? WHERE seq = ?",
            (json.dumps(payload), prev, digest, s),
        )
        prev = digest
    db.execute("DELETE FROM snapshots")
    db.commit()
    db.close()


@pytest.mark.slow  # a served process, two audits
def test_a_rewritten_event_with_its_chain_recomputed_fails_the_audit_at_the_checkpoint(
    shared: Shared,
) -> None:
    with serving(shared) as url:
        open_claim(url, shared, "a.py")
        open_claim(url, shared, "b.py")
    checkpoints = git(shared.server, "rev-list", "--count", CHECKPOINT_REF)
    assert int(checkpoints) >= 2  # the start's and the shutdown's
    head = _audit(shared)
    assert head["ok"] is True

    _rewrite(shared.store, 2, "someone-else")
    report = _audit(shared)

    assert report["ok"] is False
    assert "brokenAt" not in report  # the chain itself verifies: only the anchor sees it
    findings = report["anchorViolations"]
    assert any(f.startswith(f"rewrite: event {head['events']} has hash") for f in findings)


def test_a_checkpoint_not_signed_by_the_anchor_key_is_reported(shared: Shared) -> None:
    with serving(shared):
        pass
    key = shared.server / ".git" / "detente-anchor.key"
    assert key.stat().st_mode & 0o777 == 0o600
    key.unlink()  # a key of the attacker's own would sign, but not as this one
    report = _audit(shared)
    assert report["ok"] is False
    assert any("anchor key" in f and "missing" in f for f in report["anchorViolations"])
