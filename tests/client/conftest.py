"""Client tests: real git repositories in tmp_path, no settings from the environment."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support import isolate_environment


@pytest.fixture(autouse=True)
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user git config, no parent repos, local mode unless a test says otherwise."""
    isolate_environment(tmp_path, monkeypatch)
    monkeypatch.setenv("DETENTE_LOCAL", "1")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository named ``repo`` on ``main`` with one commit."""
    root = tmp_path / "repo"
    root.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "Test User"],
        ["config", "user.email", "test@example.com"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    (root / "README.md").write_text("# repo\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, capture_output=True)
    subprocess.run(
        ["git", "commit", "-q", "-m", "initial"], cwd=root, check=True, capture_output=True
    )
    return root
