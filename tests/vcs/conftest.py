"""Real git repositories in ``tmp_path``, isolated from the user's git configuration."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

GitRunner = Callable[..., str]
RepoFactory = Callable[..., Path]


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global/system config (signing, hooks, default branch) and no parent repos."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    for key in list(os.environ):
        if key.startswith("GIT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))


@pytest.fixture
def git() -> GitRunner:
    """``git(cwd, *args)`` through plain subprocess: an oracle independent of detente."""

    def run(cwd: Path, *args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
        return proc.stdout.rstrip("\n")

    return run


@pytest.fixture
def make_repo(tmp_path: Path, git: GitRunner) -> RepoFactory:
    """``make_repo(name="repo")``: a repository on ``main`` with one commit of three files."""

    def make(name: str = "repo") -> Path:
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        git(repo, "config", "user.name", "Test User")
        git(repo, "config", "user.email", "test@example.com")
        (repo / "README.md").write_text("# demo\n")
        (repo / "src").mkdir()
        (repo / "src" / "app.py").write_text("a = 1\nb = 2\nc = 3\n")
        (repo / "docs").mkdir()
        (repo / "docs" / "guide.md").write_text("one\ntwo\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "initial")
        return repo

    return make


@pytest.fixture
def repo(make_repo: RepoFactory) -> Path:
    return make_repo()


@pytest.fixture
def commit(git: GitRunner) -> Callable[..., str]:
    """``commit(repo, rel, content, message="change")``: write, add, commit; return HEAD."""

    def run(repo: Path, rel: str, content: str, message: str = "change") -> str:
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        git(repo, "add", "--", rel)
        git(repo, "commit", "-q", "-m", message)
        return git(repo, "rev-parse", "HEAD")

    return run
