from __future__ import annotations

from pathlib import Path

import pytest

from detente.errors import NotFoundError, ValidationError
from detente.vcs import (
    current_oid,
    default_store_path,
    is_ancestor,
    open_repo,
    resolve_commit,
)


def test_open_repo_from_a_subdirectory_describes_the_whole_repository(repo: Path, git) -> None:
    info = open_repo(repo / "src")

    assert info.path == repo.resolve()
    assert info.name == "repo"
    assert info.common_dir == (repo / ".git").resolve()
    assert info.common_dir.is_absolute()
    assert info.default_branch == "main"
    assert info.head_oid == git(repo, "rev-parse", "HEAD")
    assert info.case_insensitive is False


def test_open_repo_accepts_an_explicit_name(repo: Path) -> None:
    assert open_repo(repo, name="payments").name == "payments"


def test_open_repo_in_a_linked_worktree_shares_the_common_dir_and_main_branch(
    repo: Path, tmp_path: Path, git
) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))

    info = open_repo(linked)

    assert info.path == linked.resolve()
    assert info.common_dir == (repo / ".git").resolve()
    assert info.default_branch == "main"
    assert info.name == "repo"


def _listed_main_worktree(git, cwd: Path) -> Path:
    return Path(
        git(cwd, "worktree", "list", "--porcelain").splitlines()[0].removeprefix("worktree ")
    )


def test_the_main_worktree_and_head_are_what_git_reports_in_every_layout(
    repo: Path, tmp_path: Path, git, commit
) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    commit(linked, "f.txt", "linked only")
    separate = tmp_path / "separate"
    git(
        tmp_path,
        "init",
        "-q",
        "-b",
        "main",
        f"--separate-git-dir={tmp_path / 'store.git'}",
        "separate",
    )
    git(
        separate,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "i",
    )

    for where in (repo / "src", linked, separate):
        info = open_repo(where)

        assert info.main_worktree == _listed_main_worktree(git, where).resolve(), where
        assert info.head_oid == git(where, "rev-parse", "HEAD"), where
    assert open_repo(linked).head_oid != open_repo(repo).head_oid
    assert open_repo(separate).name == "store"  # git lists the git dir as the main worktree


def test_default_branch_is_the_main_worktree_branch_or_main_when_detached(repo: Path, git) -> None:
    git(repo, "checkout", "-q", "-b", "develop")
    assert open_repo(repo).default_branch == "develop"

    git(repo, "checkout", "-q", "--detach")
    assert open_repo(repo).default_branch == "main"


def test_unborn_repository_has_no_head_oid(tmp_path: Path, git) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "trunk")

    info = open_repo(fresh)

    assert info.head_oid is None
    assert info.default_branch == "trunk"


def test_a_directory_outside_any_repository_is_a_validation_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()

    with pytest.raises(ValidationError, match="not inside a git repository") as info:
        open_repo(plain)

    assert info.value.field == "path"


def test_a_missing_path_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="does not exist"):
        open_repo(tmp_path / "missing")


def test_a_bare_repository_is_rejected_with_a_clear_message(tmp_path: Path, git) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))

    with pytest.raises(ValidationError, match="working tree"):
        open_repo(bare)


def test_case_insensitive_reflects_core_ignorecase(repo: Path, git) -> None:
    git(repo, "config", "core.ignorecase", "true")
    assert open_repo(repo).case_insensitive is True

    git(repo, "config", "core.ignorecase", "false")
    assert open_repo(repo).case_insensitive is False


def test_resolve_commit_returns_the_full_oid_for_any_revision(repo: Path, git) -> None:
    head = git(repo, "rev-parse", "HEAD")

    assert resolve_commit(repo, head[:10]) == head
    assert resolve_commit(repo, "main") == head
    assert len(head) == 40


@pytest.mark.parametrize("rev", ["deadbeef" * 5, "no-such-branch", "--all", ""])
def test_unknown_base_commit_is_a_validation_error_on_base_commit(repo: Path, rev: str) -> None:
    with pytest.raises(ValidationError) as info:
        resolve_commit(repo, rev)

    assert info.value.field == "baseCommit"
    assert info.value.to_problem()["field"] == "baseCommit"


def test_a_tree_oid_is_not_a_commit(repo: Path, git) -> None:
    tree = git(repo, "rev-parse", "HEAD^{tree}")

    with pytest.raises(ValidationError, match="unknown commit"):
        resolve_commit(repo, tree)


def test_current_oid_reads_a_ref_or_returns_none(repo: Path, git, commit) -> None:
    head = commit(repo, "x.txt", "x\n")

    assert current_oid(repo, "refs/heads/main") == head
    assert current_oid(repo, "refs/heads/missing") is None


def test_is_ancestor_follows_history(repo: Path, git, commit) -> None:
    first = git(repo, "rev-parse", "HEAD")
    second = commit(repo, "x.txt", "x\n")

    assert is_ancestor(repo, first, second) is True
    assert is_ancestor(repo, second, first) is False
    assert is_ancestor(repo, first, first) is True
    with pytest.raises(ValidationError) as info:
        is_ancestor(repo, "f" * 40, first)
    assert info.value.field == "ancestor"


def test_default_store_path_is_shared_by_every_worktree(repo: Path, tmp_path: Path, git) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))

    expected = (repo / ".git").resolve() / "detente" / "detente.db"
    assert default_store_path(repo) == expected
    assert default_store_path(linked / "src") == expected
