"""Moving a checked-out branch: an update interrupted by a crash is finished, not refused."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from detente.errors import BranchInUse
from detente.vcs.checkout import checkout_base, refuse_dirty_checkouts, update_checkouts

GitRunner = Callable[..., str]

MAIN = "refs/heads/main"


def _commit_beside(repo: Path, git: GitRunner, parent: str, rel: str, text: str) -> str:
    """A commit on ``parent`` adding ``rel``, made in a side index: the checkout is untouched."""
    env = {**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / "side-index")}

    def side(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=repo,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    blob = side("hash-object", "-w", "--stdin", stdin=text)
    side("read-tree", parent)
    side("update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}")
    return side("commit-tree", side("write-tree"), "-p", parent, "-m", f"add {rel}")


def _interrupted(repo: Path, git: GitRunner) -> tuple[str, str]:
    """main moved to a new commit (as ``update-ref`` does) but its checkout was not updated."""
    before = git(repo, "rev-parse", "HEAD")
    moved = _commit_beside(repo, git, before, "done/1.txt", "one\n")
    git(repo, "update-ref", MAIN, moved, before)
    return before, moved


def test_a_checkout_left_behind_by_a_killed_update_is_finished_by_the_next_one(
    repo: Path, git: GitRunner
) -> None:
    before, moved = _interrupted(repo, git)
    assert checkout_base(repo, moved) == before
    new = _commit_beside(repo, git, moved, "done/2.txt", "two\n")
    worktrees = refuse_dirty_checkouts(repo, MAIN, moved, new)
    git(repo, "update-ref", MAIN, new, moved)
    update_checkouts(worktrees, moved, new)
    assert (repo / "done" / "1.txt").read_text() == "one\n"
    assert (repo / "done" / "2.txt").read_text() == "two\n"
    assert git(repo, "status", "--porcelain") == ""


def test_a_real_edit_in_a_checkout_left_behind_still_refuses_the_update(
    repo: Path, git: GitRunner
) -> None:
    _, moved = _interrupted(repo, git)
    (repo / "README.md").write_text("# someone's edit\n")
    new = _commit_beside(repo, git, moved, "done/2.txt", "two\n")
    with pytest.raises(BranchInUse) as refused:
        refuse_dirty_checkouts(repo, MAIN, moved, new)
    assert refused.value.extra["dirtyPaths"] == ["README.md"]
    assert (repo / "README.md").read_text() == "# someone's edit\n"


def test_a_checkout_in_step_with_its_branch_has_the_branch_as_its_base(
    repo: Path, git: GitRunner
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    assert checkout_base(repo, head) == head


def test_moving_the_branch_of_a_clean_checkout_costs_no_extra_git_call(
    repo: Path, git: GitRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = git(repo, "rev-parse", "HEAD")
    new = _commit_beside(repo, git, old, "done/1.txt", "one\n")
    trace = tmp_path / "trace.log"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    worktrees = refuse_dirty_checkouts(repo, MAIN, old, new)
    monkeypatch.delenv("GIT_TRACE")
    git(repo, "update-ref", MAIN, new, old)
    monkeypatch.setenv("GIT_TRACE", str(trace))
    update_checkouts(worktrees, old, new)
    commands = [
        line.split("trace: built-in: git ", 1)[1].split()[0]
        for line in trace.read_text().splitlines()
        if "trace: built-in: git " in line
    ]
    # Nothing staged: the index is the branch's tree, no write-tree or log to find it.
    assert "write-tree" not in commands and "log" not in commands
    assert commands.count("read-tree") == 1
    assert (repo / "done" / "1.txt").read_text() == "one\n"
    assert git(repo, "status", "--porcelain") == ""
