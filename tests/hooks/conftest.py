"""A shared bare repository with a clone, a real detente server, real git commands.

The server runs in this process (uvicorn on a socket bound before it starts); the hooks
are separate processes started by git, exactly as in production. ``checks`` counts the
server's protected-ref checks (the real check runs; the counter only watches it).
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hooks_harness import Server, Shared, detente, git

from detente.clock import SystemClock
from detente.server import make_server
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global/system git config and no repository variables from the caller."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    for key in list(os.environ):
        if key.startswith("GIT_") and not key.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_")):
            monkeypatch.delenv(key)
    monkeypatch.delenv("DETENTE_URL", raising=False)
    monkeypatch.delenv("DETENTE_CLAIM", raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))


@pytest.fixture
def shared(tmp_path: Path) -> Shared:
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    (work / "a.py").write_text("a = 1\n")
    (work / "b.py").write_text("b = 1\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "initial")
    git(work, "push", "-q", "origin", "HEAD:main")
    return Shared(bare, work, git(work, "rev-parse", "HEAD"))


@pytest.fixture
def server(shared: Shared, tmp_path: Path) -> Iterator[Server]:
    """A detente server coordinating the bare repository (name ``shared``)."""
    service = Service(
        SqliteStore(tmp_path / "detente.db"), SystemClock(), [RepoConfig("shared", shared.bare)]
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    running = Server(url, service)
    check_push = service.gates.check_push

    def counted(repo: str, ref: str, *args: Any, **kw: Any) -> int:
        running.checks.append(ref)
        return check_push(repo, ref, *args, **kw)

    service.gates.check_push = counted  # type: ignore[method-assign]
    uv = make_server(service, sweep_interval=3600)
    thread = threading.Thread(target=lambda: uv.run(sockets=[sock]), daemon=True)
    thread.start()
    try:
        assert httpx.get(f"{url}/healthz", timeout=20).json()["ok"] is True
        yield running
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()
        service.store.close()


@pytest.fixture
def installed(shared: Shared, server: Server) -> Server:
    """The server-side hooks installed in the shared repository."""
    detente(
        "--server", server.url, "hooks", "install", "--bare", str(shared.bare), "--name", "shared"
    )
    return server
