"""The git hooks for real: a bare repository, real ``git push``, a real detente server.

The server runs in this process (uvicorn on a socket bound before it starts); the hooks
are separate processes started by git, exactly as in production.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from detente.cli.main import app
from detente.clock import SystemClock
from detente.domain.claims.model import ClaimStatus
from detente.domain.gates.evidence import BaseRef, Evidence
from detente.domain.gates.integration import CompleteClaim
from detente.server import make_server
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import seed


def run_git(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def git(cwd: Path, *args: str) -> str:
    proc = run_git(cwd, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.rstrip("\n")


def _identity(repo: Path) -> None:
    git(repo, "config", "user.name", "Test User")
    git(repo, "config", "user.email", "test@example.com")


@pytest.fixture
def shared(tmp_path: Path) -> tuple[Path, Path, str]:
    """A bare ``shared.git`` with one commit on main, and a clone ``work``; (bare, work, M0)."""
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    _identity(work)
    (work / "a.py").write_text("a = 1\n")
    (work / "b.py").write_text("b = 1\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "initial")
    git(work, "push", "-q", "origin", "HEAD:main")
    return bare, work, git(work, "rev-parse", "HEAD")


@pytest.fixture
def server(shared: tuple[Path, Path, str], tmp_path: Path) -> Iterator[tuple[str, Service]]:
    """A detente server coordinating the bare repository, on a free local port."""
    bare = shared[0]
    service = Service(
        SqliteStore(tmp_path / "detente.db"), SystemClock(), [RepoConfig("shared", bare)]
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    uv = make_server(service, sweep_interval=3600)
    thread = threading.Thread(target=lambda: uv.run(sockets=[sock]), daemon=True)
    thread.start()
    try:
        assert httpx.get(f"{url}/healthz", timeout=20).json()["ok"] is True
        yield url, service
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()
        service.store.close()


def _install(url: str, *args: str) -> dict[str, object]:
    result = CliRunner().invoke(
        app, ["--server", url, "hooks", "install", *args, "--json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    body: dict[str, object] = json.loads(result.stdout)
    return body


def _commit(work: Path, rel: str, text: str, *trailers: str) -> str:
    (work / rel).write_text(text)
    message = ["-m", f"change {rel}"] + [arg for t in trailers for arg in ("-m", t)]
    git(work, "commit", "-q", "-a", *message)
    return git(work, "rev-parse", "HEAD")


def test_a_push_that_bypasses_detente_is_refused_and_a_ready_claim_lands(
    shared: tuple[Path, Path, str], server: tuple[str, Service]
) -> None:
    bare, work, m0 = shared
    url, service = server
    installed = _install(url, "--bare", str(bare), "--name", "shared")
    assert installed["protectedRefs"] == ["refs/heads/main"]

    _commit(work, "b.py", "b = 2\n")
    bypass = run_git(work, "push", "origin", "HEAD:main")
    assert bypass.returncode != 0
    assert "no 'Detente-Claim: <id>' trailer" in bypass.stderr
    assert git(bare, "rev-parse", "main") == m0

    claim = service.claims.open_claim(
        replace(seed("a.py", repo="shared", branch="claim/a"), base_commit=m0)
    ).claim
    git(work, "reset", "-q", "--hard", m0)
    head = _commit(work, "a.py", "a = 2\n", f"Detente-Claim: {claim.id}")
    not_ready = run_git(work, "push", "origin", "HEAD:main")
    assert not_ready.returncode != 0 and f"claim {claim.id} is active" in not_ready.stderr

    git(work, "push", "-q", "origin", "HEAD:refs/heads/claim/a")  # unprotected: no check
    review = CompleteClaim(
        claim.id,
        claim.revision,
        claim.fencing_token,
        BaseRef("refs/heads/main", m0),
        Evidence(head_commit=head, changed_files=("a.py",)),
        integrate=False,
    )
    assert service.gates.complete(claim.id, review).claim.status is ClaimStatus.READY_FOR_REVIEW
    landed = run_git(work, "push", "origin", "HEAD:main")
    assert landed.returncode == 0, landed.stderr
    assert git(bare, "rev-parse", "main") == head
    assert f"claim {claim.id} integrated" in landed.stderr  # the post-receive report
    after = service.claims.get_claim(claim.id).claim
    assert after.status is ClaimStatus.COMPLETED
    assert after.integration and after.integration["newOid"] == head


def test_the_server_side_hook_fails_closed_when_the_server_is_unreachable(
    shared: tuple[Path, Path, str], server: tuple[str, Service]
) -> None:
    bare, work, m0 = shared
    url, _ = server
    _install(url, "--bare", str(bare), "--name", "shared")
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    git(bare, "config", "detente.url", dead)

    _commit(work, "b.py", "b = 3\n", "Detente-Claim: clm_whatever")
    push = run_git(work, "push", "origin", "HEAD:main")

    assert push.returncode != 0
    assert f"the detente server at {dead} is unreachable" in push.stderr
    assert "failing closed: refusing the update of protected ref refs/heads/main" in push.stderr
    assert git(bare, "rev-parse", "main") == m0


def test_pre_commit_refuses_a_git_add_all_that_takes_another_claims_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git(checkout, "init", "-q", "-b", "main")
    _identity(checkout)
    for rel in ("a.py", "b.py"):
        (checkout / rel).write_text(f"{rel} v1\n")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "initial")
    monkeypatch.setenv("DETENTE_LOCAL", "1")
    cli = CliRunner()

    def detente(*args: str) -> dict[str, object]:
        result = cli.invoke(app, ["--repo", str(checkout), *args, "--json"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        body: dict[str, object] = json.loads(result.stdout)
        return body

    a_id = detente("claim", "open", "-o", "A", "-p", "a.py", "--agent", "alice", "--no-worktree")
    b_id = detente("claim", "open", "-o", "B", "-p", "b.py", "--agent", "bob", "--no-worktree")
    alice = str(a_id["claim"]["id"])  # type: ignore[index]
    bob = str(b_id["claim"]["id"])  # type: ignore[index]
    detente("hooks", "install")

    (checkout / "a.py").write_text("alice's unfinished work\n")
    (checkout / "b.py").write_text("bob's change\n")
    as_bob = {"DETENTE_CLAIM": bob}
    git(checkout, "add", "-A")
    refused = run_git(checkout, "commit", "-q", "-m", "bob", env=as_bob)
    assert refused.returncode != 0
    assert f"a.py is held by claim {alice} (alice)" in refused.stderr
    assert "commit refused" in refused.stderr

    git(checkout, "restore", "--staged", "a.py")
    accepted = run_git(checkout, "commit", "-q", "-m", "bob", env=as_bob)
    assert accepted.returncode == 0, accepted.stderr
    assert git(checkout, "show", "--name-only", "--format=", "HEAD") == "b.py"
    assert (checkout / "a.py").read_text() == "alice's unfinished work\n"
    assert git(checkout, "status", "--porcelain") == " M a.py"
