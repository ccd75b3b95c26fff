"""The log's anchor in process: a real git repository holds the signed checkpoints, a real
SQLite file the log; a restored older copy and a checkpoint the store contradicts are
found by the audit, and a restart never grants a fencing token twice."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.service.anchor import CHECKPOINT_REF, Anchor, Checkpoint
from detente.storage.sqlite import SqliteStore
from detente.vcs.record_ref import append_record, read_records

from support import seed


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (("init", "-q", "-b", "main"), ("commit", "-q", "--allow-empty", "-m", "m0")):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


def _service(repo: Path, db: Path) -> Service:
    service = Service(SqliteStore(db), FakeClock(), [RepoConfig("demo", path=repo)])
    service.anchor = Anchor(repo, repo / ".git" / "anchor.key", f"sqlite:///{db}", every=3)
    return service


def _served(repo: Path, db: Path, *paths: str) -> list[int]:
    """A server's life: start, open a claim per path, stop; the claims' fencing tokens."""
    service = _service(repo, db)
    service.start_anchor()
    try:
        return [service.claims.open_claim(seed(p)).claim.fencing_token for p in paths]
    finally:
        service.stop_anchor()
        service.store.close()


def _audit(repo: Path, db: Path) -> list[str]:
    service = _service(repo, db)
    try:
        return service.audit().anchor
    finally:
        service.store.close()


def test_a_server_checkpoints_its_start_every_few_events_and_its_stop_signed_in_a_ref(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    _served(repo, tmp_path / "d.db", "a.py", "b.py", "c.py")  # two events each

    records = [Checkpoint.parse(r) for r in read_records(repo, CHECKPOINT_REF)]

    assert all(r is not None for r in records)
    seqs = [r[0].seq for r in records if r]
    assert seqs[0] == 0  # the empty log it started on
    assert seqs[-1] == 6  # the shutdown's
    assert len(seqs) >= 3  # and one or more on the way (every 3 events here)
    assert _audit(repo, tmp_path / "d.db") == []


def test_a_restored_older_store_is_a_rollback_and_its_tokens_are_not_granted_again(
    tmp_path: Path,
) -> None:
    repo, db = _repo(tmp_path), tmp_path / "d.db"
    before = _served(repo, db, "a.py")
    shutil.copy(db, tmp_path / "old.db")
    later = _served(repo, db, "b.py", "c.py")
    shutil.copy(tmp_path / "old.db", db)

    findings = _audit(repo, db)
    after = _served(repo, db, "d.py")

    assert any(f.startswith("rollback: the store ends at event") for f in findings), findings
    assert after[0] > max(before + later)


def test_a_store_event_that_differs_from_its_checkpoint_is_a_rewrite(tmp_path: Path) -> None:
    repo, db = _repo(tmp_path), tmp_path / "d.db"
    _served(repo, db, "a.py")
    service = _service(repo, db)
    service.start_anchor()
    service.anchor.write(1, "0" * 64, 0, "2026-12-01T00:00:00Z")  # type: ignore[union-attr]
    service.store.close()

    assert any(f.startswith("rewrite: event 1 has hash") for f in _audit(repo, db))


def test_a_checkpoint_signed_by_another_key_is_reported(tmp_path: Path) -> None:
    repo, db = _repo(tmp_path), tmp_path / "d.db"
    _served(repo, db, "a.py")
    other = Anchor(repo, tmp_path / "attacker.key", f"sqlite:///{db}")
    other.start()
    other.write(1, "f" * 64, 0, "2026-12-01T00:00:00Z")

    assert any("not signed by the anchor key" in f for f in _audit(repo, db))


def test_the_record_chain_appends_by_compare_and_swap_and_reads_oldest_first(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    for n in range(3):
        append_record(repo, "refs/detente/test", f"record {n}\n".encode(), f"r{n}")

    assert read_records(repo, "refs/detente/test") == [b"record 0\n", b"record 1\n", b"record 2\n"]
    assert read_records(repo, "refs/detente/none") == []


def test_a_claim_the_default_branch_lands_must_be_integrated_in_the_log(tmp_path: Path) -> None:
    repo, db = _repo(tmp_path), tmp_path / "d.db"
    [token] = _served(repo, db, "a.py")
    service = _service(repo, db)
    opened = next(e for e in service.events(since=0)[0] if e.type == "claim.announced")
    service.store.close()
    for claim_id in (opened.subject.partition("/")[2], "clm_never_opened"):
        message = f"work\n\nDetente-Claim: {claim_id}\n"
        subprocess.run(
            ["git", "commit", "-q", "--allow-empty", "-m", message], cwd=repo, check=True
        )

    findings = _audit(repo, db)

    assert token > 0
    assert any(opened.subject[6:] in f and "no claim.integrated" in f for f in findings)
    assert any("clm_never_opened" in f and "does not know" in f for f in findings)
