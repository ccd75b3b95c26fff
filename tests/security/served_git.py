"""A real shared bare repository with detente's hooks, and a real ``detente serve``.

The server is a separate process (``python -c 'from detente.cli.main import main'``)
serving the server's clone of the bare repository (detente serves a working tree) on its
default SQLite file; it stops with SIGTERM, the clean shutdown a service manager gives
it. The hooks are the installed scripts git runs in the bare repository on ``git push``;
the server's clone fetches what was pushed, as a deployment's sync would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from served_process import first_line

DETENTE = [sys.executable, "-c", "from detente.cli.main import main; main()"]


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def push(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``git push -q origin <args>`` (the hooks run in the bare repository)."""
    return subprocess.run(
        ["git", "push", "-q", "origin", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def detente(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``detente <args>`` as a separate process."""
    return subprocess.run(
        [*DETENTE, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


@dataclass
class Shared:
    """The bare repository, a clone to work in, the server's clone, ``main``'s first
    commit."""

    bare: Path
    work: Path
    server: Path
    m0: str

    @property
    def store(self) -> Path:
        """The server's SQLite file (its clone's default store)."""
        return self.server / ".git" / "detente" / "detente.db"

    def fetch(self) -> None:
        """The server's clone learns what was pushed (``origin/*``)."""
        git(self.server, "fetch", "-q", "origin")

    def commit(self, rel: str, text: str, trailer: str) -> str:
        (self.work / rel).write_text(text)
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "-m", f"change {rel}", "-m", trailer)
        return git(self.work, "rev-parse", "HEAD")


def make_shared(tmp_path: Path) -> Shared:
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    git(work, "config", "user.name", "Test User")
    git(work, "config", "user.email", "test@example.com")
    for name in ("a.py", "b.py", "c.py"):
        (work / name).write_text(f"{name[0]} = 1\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "initial")
    git(work, "push", "-q", "origin", "HEAD:refs/heads/main")
    server = tmp_path / "server" / "shared"  # local commands name it as the server does
    server.parent.mkdir()
    git(tmp_path, "clone", "-q", str(bare), str(server))
    return Shared(bare, work, server, git(work, "rev-parse", "HEAD"))


@contextmanager
def serving(shared: Shared, *flags: str, hooks_env: dict[str, str] | None = None) -> Iterator[str]:
    """A real ``detente serve`` of ``shared.server`` (name ``shared``), the hooks of
    ``shared.bare`` installed pointing at it; stopped cleanly (SIGTERM) on exit. Yields
    its URL."""
    command = [*DETENTE, "--repo", str(shared.server), "serve", "--name", "shared"]
    proc = subprocess.Popen(
        [*command, "--port", "0", *flags, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = first_line(proc, timeout=60)
        assert line, proc.stderr.read() if proc.stderr else "no output"
        url = str(json.loads(line)["listening"])
        assert httpx.get(f"{url}/healthz", timeout=30).json()["ok"] is True
        installed = detente(
            "--server",
            url,
            "hooks",
            "install",
            "--bare",
            str(shared.bare),
            "--name",
            "shared",
            env=hooks_env,
        )
        assert installed.returncode == 0, installed.stderr
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        assert proc.returncode == 0, proc.stderr.read() if proc.stderr else proc.returncode


def open_claim(
    url: str, shared: Shared, path: str, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """``POST /v1/claims`` for ``path`` on ``main``'s first commit: the claim record."""
    body = {
        "repo": "shared",
        "objective": f"edit {path}",
        "baseCommit": shared.m0,
        "paths": [path],
        "leaseTtlSeconds": 600,
        "agent": {"id": f"agent-{path}", "name": "agent"},
    }
    answer = httpx.post(f"{url}/v1/claims", json=body, headers=headers, timeout=30)
    assert answer.status_code == 201, answer.text
    claim: dict[str, Any] = answer.json()["claim"]
    return claim


def ready(
    url: str,
    shared: Shared,
    claim: dict[str, Any],
    path: str,
    headers: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """The claim's commit on ``path``, pushed to its topic branch and completed without
    integrating (``ready_for_review``): the commit."""
    git(shared.work, "checkout", "-q", "-B", f"topic-{path}", shared.m0)
    head = shared.commit(path, "changed = 2\n", f"Detente-Claim: {claim['id']}")
    pushed = push(shared.work, f"HEAD:refs/heads/claim/{path}", env=env)
    assert pushed.returncode == 0, pushed.stderr
    shared.fetch()
    body = {
        "expectedClaimRevision": claim["revision"],
        "expectedBaseRef": {"ref": "refs/heads/main", "oid": shared.m0},
        "evidence": {"headCommit": head, "changedFiles": [path]},
        "integrate": False,
    }
    answer = httpx.post(
        f"{url}/v1/claims/{claim['id']}/complete", json=body, headers=headers, timeout=30
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["claim"]["status"] == "ready_for_review"
    return head
