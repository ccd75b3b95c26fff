"""Helpers for the integration, evidence, hooks, patch and deployment tests.

Real git repositories in ``tmp_path`` (plain ``git`` through subprocess, an oracle
independent of detente), services on SQLite, evidence bodies. Commit times are pinned
(``GIT_COMMITTER_DATE``) so "recorded after the head commit" is decided by the test, not
by the wall clock.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from detente.clock import FakeClock
from detente.domain.gates.evidence import BaseRef, Evidence, TestRecord
from detente.domain.gates.integration import CompleteClaim
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import counting_ids, isolate_environment

#: Commit times start here (2026-01-01T00:00:00Z) unless a test says otherwise.
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user/system git config, no parent repositories, no detente settings."""
    isolate_environment(tmp_path, monkeypatch)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test User")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test User")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.com")


def git(cwd: Path, *args: str, input: str | None = None, env: Mapping[str, str] = {}) -> str:
    """Plain ``git``; raises with stderr on failure; returns stdout without trailing newlines."""
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.rstrip("\n")


def at(seconds: float) -> datetime:
    """``T0 + seconds``."""
    return T0 + timedelta(seconds=seconds)


def commit(
    repo: Path,
    files: Mapping[str, str | None],
    message: str = "change",
    *,
    parent: str | None = None,
    ref: str | None = None,
    when: float = 0,
) -> str:
    """A commit built with plumbing (no checkout): ``parent``'s tree plus ``files`` (None
    deletes), committed at ``T0 + when``; ``ref`` is set to it when given. Returns its OID."""
    index = repo / ".git" / f"detente-test-index-{os.getpid()}"
    env = {"GIT_INDEX_FILE": str(index)}
    if parent is not None:
        git(repo, "read-tree", parent, env=env)
    else:
        git(repo, "read-tree", "--empty", env=env)
    for rel, content in files.items():
        if content is None:
            git(repo, "update-index", "--force-remove", "--", rel, env=env)
            continue
        blob = git(repo, "hash-object", "-w", "--stdin", input=content)
        git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
    tree = git(repo, "write-tree", env=env)
    index.unlink()
    stamp = f"{int(at(when).timestamp())} +0000"
    dates = {"GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp}
    parents = ["-p", parent] if parent is not None else []
    oid = git(repo, "commit-tree", tree, *parents, "-m", message, env=dates)
    if ref is not None:
        git(repo, "update-ref", ref, oid)
    return oid


def make_repo(root: Path) -> tuple[Path, str]:
    """A repository whose ``main`` holds ``a.py``, ``b.py``, ``docs/guide.md`` (nothing
    checked out); returns (path, M0)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    files = {"a.py": "a = 1\n", "b.py": "b = 1\n", "docs/guide.md": "# guide\n"}
    m0 = commit(root, files, "initial", ref="refs/heads/main")
    return root, m0


def make_service(repo: Path, db: Path, *, name: str = "demo") -> Service:
    """A service on SQLite coordinating ``repo`` (a fake clock: leases never run out)."""
    return Service(SqliteStore(db), FakeClock(), [RepoConfig(name, repo)], ids=counting_ids())


def passed(name: str, when: float, exit_code: int = 0, status: str = "passed") -> TestRecord:
    return TestRecord(name, status, exit_code, at(when))


def completion(
    claim: Any,
    head: str,
    base: str,
    files: tuple[str, ...],
    *,
    tests: tuple[TestRecord, ...] = (),
    ref: str = "refs/heads/main",
    token: int | None = None,
    **evidence: Any,
) -> CompleteClaim:
    """The complete command of ``claim`` (a Claim) with this evidence."""
    return CompleteClaim(
        claim_id=claim.id,
        expected_claim_revision=claim.revision,
        fencing_token=claim.fencing_token if token is None else token,
        expected_base_ref=BaseRef(ref, base),
        evidence=Evidence(head_commit=head, changed_files=files, tests=tests, **evidence),
    )
