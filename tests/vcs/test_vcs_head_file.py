"""read_head: a worktree's HEAD commit read from git's files agrees with ``git rev-parse
HEAD`` wherever it answers, and leaves to git what the files do not say plainly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from detente.vcs.head_file import read_head


def test_a_branch_with_a_loose_ref_is_read(repo: Path, git: Callable[..., str]) -> None:
    assert read_head(repo) == git(repo, "rev-parse", "HEAD")


def test_a_branch_only_in_packed_refs_is_read(repo: Path, git: Callable[..., str]) -> None:
    git(repo, "pack-refs", "--all", "--prune")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()

    assert read_head(repo) == git(repo, "rev-parse", "HEAD")


def test_a_loose_ref_wins_over_its_stale_packed_line(
    repo: Path, git: Callable[..., str], commit: Callable[..., str]
) -> None:
    git(repo, "pack-refs", "--all")
    moved = commit(repo, "src/app.py", "a = 2\n")

    assert read_head(repo) == moved == git(repo, "rev-parse", "HEAD")


def test_a_detached_head_is_its_commit(repo: Path, git: Callable[..., str]) -> None:
    git(repo, "checkout", "-q", "--detach")

    assert read_head(repo) == git(repo, "rev-parse", "HEAD")


def test_a_linked_worktree_reads_its_own_head_and_the_shared_branches(
    repo: Path, tmp_path: Path, git: Callable[..., str], commit: Callable[..., str]
) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    moved = commit(linked, "docs/guide.md", "three\n")

    assert read_head(linked) == moved == git(linked, "rev-parse", "HEAD")
    assert read_head(repo) == git(repo, "rev-parse", "HEAD") != moved


def test_an_unborn_branch_or_no_repository_is_left_to_git(tmp_path: Path, git) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")

    assert read_head(empty) is None
    assert read_head(tmp_path / "nowhere") is None


def test_a_head_naming_something_outside_the_branches_is_not_read(repo: Path) -> None:
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/../../config\n")

    assert read_head(repo) is None
