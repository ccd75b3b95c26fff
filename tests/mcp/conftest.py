"""MCP test environments: the SDK's real client over three transports.

``env`` is parametrized over

- ``inprocess``: ``mcp.Client(server)`` connected in-process to the server built over an
  in-process client of a service with a :class:`FakeClock` (time moves with
  ``env.advance``);
- ``remote``: the same, but the server's tools call a real uvicorn server through the
  HTTP client (so every tool runs against both client implementations);
- ``http``: a real uvicorn server (``tests/api/conftest.py``'s ``running``) serving the
  detente app with MCP mounted at ``/mcp``, fake clock too, client over streamable HTTP;
- ``stdio``: ``detente mcp --repo`` spawned as a subprocess per connection (two
  connections are two agent processes sharing the repository's SQLite store); real
  clock, so expiry uses a real short TTL.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from mcp_harness import McpEnv

from api.conftest import running
from detente.client import connect
from detente.client.inprocess import InProcessClient
from detente.clock import FakeClock
from detente.mcp_server.server import build_server
from detente.runtime import build_service


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global/system git config and no parent repositories."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    for key in list(os.environ):
        if key.startswith("GIT_") or key in ("DETENTE_STORE", "DETENTE_URL", "DETENTE_LOCAL"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository on ``main`` with one commit (``docs/foo.md``, ``src/app.py``)."""
    path = tmp_path / "demo"
    (path / "docs").mkdir(parents=True)
    (path / "src").mkdir()
    (path / "docs" / "foo.md").write_text("# foo\n")
    (path / "src" / "app.py").write_text("a = 1\n")
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "Test"],
        ["config", "user.email", "test@example.com"],
        ["add", "-A"],
        ["commit", "-q", "-m", "initial"],
    ):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path


@pytest.fixture(params=["inprocess", "remote", "http", "stdio"])
def env(request: pytest.FixtureRequest, repo: Path, tmp_path: Path) -> Iterator[McpEnv]:
    with ExitStack() as stack:
        if request.param == "stdio":
            yield McpEnv("stdio", repo, ttl=1)
            return
        clock = FakeClock()
        store = f"sqlite:///{tmp_path / 'detente.db'}"
        service = build_service([repo], store_url=store, clock=clock)
        stack.callback(service.store.close)
        if request.param == "inprocess":
            server = build_server(InProcessClient(service))
            yield McpEnv("inprocess", repo, ttl=60, clock=clock, server=server)
            return
        base = stack.enter_context(running(service))
        if request.param == "remote":
            client = stack.enter_context(connect(base, repo, local=False))
            yield McpEnv("remote", repo, ttl=60, clock=clock, server=build_server(client))
            return
        yield McpEnv("http", repo, ttl=60, clock=clock, url=f"{base}/mcp", service=service)
