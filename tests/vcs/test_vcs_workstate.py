"""A claim's work in git: read with one git call, the commit count cached by OIDs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from detente.vcs.rescue import RESCUE_PREFIX
from detente.vcs.workstate import work_state

GitRunner = Callable[..., str]


def _git_commands(trace: Path) -> list[str]:
    """The git commands a trace file recorded (``GIT_TRACE``), one per process."""
    if not trace.exists():
        return []
    return [
        line.split("trace: built-in: git ", 1)[1]
        for line in trace.read_text().splitlines()
        if "trace: built-in: git " in line
    ]


def test_the_work_state_names_branch_head_commits_rescue_and_worktree(
    repo: Path, git: GitRunner, commit: Callable[..., str], tmp_path: Path
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "-c", "claim/a")
    commit(repo, "src/one.py", "1\n")
    head = commit(repo, "src/two.py", "2\n")
    git(repo, "switch", "-q", "main")
    git(repo, "branch", "claim/ab", head)  # a longer name: not the claim's branch
    git(repo, "update-ref", RESCUE_PREFIX + "clm_1", head)

    state = work_state(
        repo, claim_id="clm_1", branch="claim/a", base_commit=base, worktree=str(tmp_path)
    )

    assert state == {
        "branchHead": head,
        "commitsSinceBase": 2,
        "worktree": {"path": str(tmp_path), "exists": True},
        "rescue": {"ref": RESCUE_PREFIX + "clm_1", "oid": head},
    }


def test_a_missing_branch_and_rescue_ref_read_as_none(repo: Path, git: GitRunner) -> None:
    base = git(repo, "rev-parse", "HEAD")
    state = work_state(
        repo, claim_id="clm_2", branch="gone", base_commit=base, worktree="/nowhere/at/all"
    )
    assert state == {
        "branchHead": None,
        "commitsSinceBase": None,
        "worktree": {"path": "/nowhere/at/all", "exists": False},
        "rescue": None,
    }


def test_an_unchanged_claim_is_read_again_with_one_git_call(
    repo: Path,
    git: GitRunner,
    commit: Callable[..., str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "-c", "claim/b")
    commit(repo, "src/one.py", "1\n")
    trace = tmp_path / "trace.log"
    monkeypatch.setenv("GIT_TRACE", str(trace))

    def read() -> int | None:
        state = work_state(repo, claim_id="c", branch="claim/b", base_commit=base, worktree=None)
        count: int | None = state["commitsSinceBase"]
        return count

    assert read() == 1
    first = _git_commands(trace)
    assert read() == 1
    second = _git_commands(trace)[len(first) :]

    assert [c.split()[0] for c in first] == ["for-each-ref", "rev-list"]
    assert [c.split()[0] for c in second] == ["for-each-ref"]

    # A new head is a new question: counted again, and right.
    commit(repo, "src/two.py", "2\n")
    before = len(_git_commands(trace))
    assert read() == 2
    assert [c.split()[0] for c in _git_commands(trace)[before:]] == ["for-each-ref", "rev-list"]
