"""The hook scripts themselves: what starts Python, and what a missing Python means."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from detente.vcs.hook_scripts import SERVER_HOOKS, hook_script, install_server


def _bare_with_two_commits(tmp_path: Path, git) -> tuple[Path, str, str]:
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(bare, "config", "user.name", "Test User")
    git(bare, "config", "user.email", "test@example.com")
    tree = subprocess.run(
        ["git", "mktree"], cwd=bare, input="", capture_output=True, text=True, check=True
    ).stdout.strip()
    first = git(bare, "commit-tree", tree, "-m", "one")
    second = git(bare, "commit-tree", tree, "-p", first, "-m", "two")
    git(bare, "update-ref", "refs/heads/main", first)
    return bare, first, second


def test_only_an_update_of_a_protected_ref_starts_python(
    tmp_path: Path, git, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, first, second = _bare_with_two_commits(tmp_path, git)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    install_server(bare, url="http://127.0.0.1:9", repo_name="shared")

    git(bare, "update-ref", "refs/heads/topic", second)  # no Python needed: it passes
    git(bare, "tag", "v1", second)
    git(bare, "branch", "-D", "topic")
    moved = subprocess.run(
        ["git", "update-ref", "refs/heads/main", second],
        cwd=bare,
        capture_output=True,
        text=True,
        check=False,
    )

    assert moved.returncode != 0  # Python is needed and missing: refused, never waved through
    assert git(bare, "rev-parse", "refs/heads/main") == first


def test_every_script_is_valid_sh_naming_its_hook(tmp_path: Path) -> None:
    for hook in (*SERVER_HOOKS, "pre-commit"):
        script = tmp_path / hook
        script.write_text(hook_script(hook))
        assert subprocess.run(["sh", "-n", str(script)], check=False).returncode == 0
        assert f"-m detente.hooks {hook} " in script.read_text()
