"""End-to-end tests: real ``detente`` processes, real servers, real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import git

from support import isolate_environment


@pytest.fixture(autouse=True)
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user git config and no detente settings; subprocesses inherit this environment."""
    isolate_environment(tmp_path, monkeypatch)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small project with history: three commits touching src/app/, docs/ and README."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test User")
    git(root, "config", "user.email", "test@example.com")
    commits = {
        "scaffold": {"src/app/__init__.py": "", "src/app/core.py": "x = 1\n"},
        "docs": {"docs/guide.md": "# guide\n", "README.md": "# project\n"},
        "feature": {"src/app/api.py": "def f():\n    return 1\n"},
    }
    for message, files in commits.items():
        for rel, content in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(content)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message)
    return root
