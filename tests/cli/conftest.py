"""CLI tests: ``typer.testing.CliRunner`` against real git repos in tmp_path.

The ``cli`` fixture runs every test against both client implementations:

- ``inprocess``: local mode is forced (``DETENTE_LOCAL=1``) so no test ever talks to a
  stray server on port 7420; each invocation builds the service on the repo's own SQLite
  file and calls it in-process;
- ``http``: a real uvicorn server on a free loopback port serves the repository (on the
  same default SQLite file) and every invocation talks to it (``DETENTE_URL``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import Cli, Git

from api.conftest import running
from detente import runtime
from detente.clock import FakeClock
from detente.runtime import build_service

from support import isolate_environment


@pytest.fixture(autouse=True)
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user git config, no parent repos, no detente settings from the environment."""
    isolate_environment(tmp_path, monkeypatch)
    monkeypatch.setenv("DETENTE_LOCAL", "1")
    monkeypatch.setenv("COLUMNS", "250")


@pytest.fixture
def git() -> Git:
    """``git(cwd, *args)`` through plain subprocess: an oracle independent of detente."""

    def run(cwd: Path, *args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
        return proc.stdout.rstrip("\n")

    return run


@pytest.fixture
def repo(tmp_path: Path, git: Git) -> Path:
    """A repository on ``main`` with two commits: src/pkg/{a,b}.py, README.md, docs/."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test User")
    git(root, "config", "user.email", "test@example.com")
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text("a = 1\n")
    (root / "src" / "pkg" / "b.py").write_text("b = 2\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("guide\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    (root / "README.md").write_text("# repo\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "readme")
    return root


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The composition root's clock, replaced by a fake one the test moves."""
    fake = FakeClock()
    monkeypatch.setattr(runtime, "default_clock", lambda _store: fake)
    return fake


@pytest.fixture(params=["inprocess", "http"])
def cli(
    request: pytest.FixtureRequest, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Cli]:
    if request.param == "inprocess":
        yield Cli(repo)
        return
    if "clock" in request.fixturenames:
        request.getfixturevalue("clock")  # the server's service must see the fake clock
    service = build_service([repo])
    try:
        with running(service) as base:
            monkeypatch.delenv("DETENTE_LOCAL")
            monkeypatch.setenv("DETENTE_URL", base)
            yield Cli(repo, mode="server")
    finally:
        service.store.close()
