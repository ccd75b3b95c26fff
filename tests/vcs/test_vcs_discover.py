"""Finding a working tree from git's files: the same answer git gives, or "ask git".

Every layout is built by real git and checked against ``git rev-parse`` in it; the
``open_repo`` tests count the git processes started through ``GIT_TRACE``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detente.vcs.discover import find_layout
from detente.vcs.repo import open_repo


def _git_says(git, where: Path) -> tuple[Path, Path]:
    top = git(where, "rev-parse", "--show-toplevel")
    common = Path(git(where, "rev-parse", "--git-common-dir"))
    return Path(top), (common if common.is_absolute() else where / common).resolve()


def test_a_main_worktree_and_its_subdirectories_are_found_where_git_finds_them(
    repo: Path, git
) -> None:
    for where in (repo, repo / "src", repo / "docs"):
        layout = find_layout(where)

        assert layout is not None, where
        assert (layout.top, layout.common_dir) == _git_says(git, where)
        assert layout.main_worktree == repo.resolve()


def test_a_linked_worktree_leads_to_the_common_directory_of_the_main_one(
    repo: Path, tmp_path: Path, git
) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    (linked / "deep" / "er").mkdir(parents=True)

    for where in (linked, linked / "deep" / "er"):
        layout = find_layout(where)

        assert layout is not None, where
        assert (layout.top, layout.common_dir) == _git_says(git, where)
        assert layout.main_worktree == repo.resolve()


def test_layouts_git_must_judge_are_left_to_git(repo: Path, tmp_path: Path, git) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    separate = tmp_path / "separate"
    git(tmp_path, "init", "-q", f"--separate-git-dir={tmp_path / 'store.git'}", "separate")
    plain = tmp_path / "plain"
    plain.mkdir()

    assert find_layout(repo / ".git") is None  # inside the git directory
    assert find_layout(repo / ".git" / "refs") is None
    assert find_layout(bare) is None
    assert find_layout(separate) is None  # its common directory is not named .git
    assert find_layout(plain) is None  # no repository below the ceiling


def test_the_search_stops_below_a_ceiling_directory_as_gits_does(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", f"/nonexistent:{repo}")

    assert find_layout(repo / "src") is None  # git would not look in the ceiling itself
    assert find_layout(repo) is not None  # the directory asked about is always looked in


def test_a_gitfile_that_leads_nowhere_is_left_to_git(repo: Path, tmp_path: Path, git) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    (linked / ".git").write_text(f"gitdir: {tmp_path / 'gone'}\n")
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / ".git").write_bytes(b"\xff" * 10)

    assert find_layout(linked) is None
    assert find_layout(junk) is None


def _git_processes(trace: Path) -> list[str]:
    if not trace.exists():
        return []
    return [line for line in trace.read_text().splitlines() if "trace: built-in" in line]


def test_open_repo_starts_no_git_process_in_a_plain_layout(
    repo: Path, tmp_path: Path, git, monkeypatch: pytest.MonkeyPatch
) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    linked_head = git(linked, "rev-parse", "HEAD")
    trace = tmp_path / "trace.txt"
    monkeypatch.setenv("GIT_TRACE", str(trace))

    main_info, linked_info = open_repo(repo / "src"), open_repo(linked)

    assert _git_processes(trace) == []
    assert (main_info.name, linked_info.name) == ("repo", "repo")
    assert linked_info.common_dir == main_info.common_dir == (repo / ".git").resolve()
    assert linked_info.default_branch == "main"
    # what a caller reads later asks git then, once
    assert linked_info.head_oid == linked_head
    assert linked_info.head_oid == linked_head
    assert len(_git_processes(trace)) == 1
