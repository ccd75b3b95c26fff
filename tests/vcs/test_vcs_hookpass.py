"""detente's integration pass: it lets exactly one update through, and only with the key."""

from __future__ import annotations

import stat
from pathlib import Path

from detente.vcs.hookpass import PASS_ENV, ensure_key, key_path, pass_env, read_key, valid_pass

OLD, NEW, OTHER = "1" * 40, "2" * 40, "3" * 40


def test_a_repository_without_a_key_gets_no_pass(repo: Path) -> None:
    assert read_key(repo / ".git") is None
    assert pass_env(repo, "refs/heads/main", OLD, NEW) == {}


def test_the_key_is_private_and_written_once(repo: Path) -> None:
    path = ensure_key(repo / ".git")
    first = path.read_text()

    assert ensure_key(repo / ".git") == path == key_path(repo / ".git")
    assert path.read_text() == first and len(first.strip()) == 64
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_pass_is_valid_for_exactly_the_update_it_names(repo: Path) -> None:
    key = read_key(ensure_key(repo / ".git").parent.parent)
    value = pass_env(repo, "refs/heads/main", OLD, NEW)[PASS_ENV]

    assert valid_pass(value, key, "refs/heads/main", OLD, NEW)
    assert not valid_pass(value, key, "refs/heads/main", OLD, OTHER)
    assert not valid_pass(value, key, "refs/heads/main", OTHER, NEW)
    assert not valid_pass(value, key, "refs/heads/release", OLD, NEW)
    assert not valid_pass(value, b"another key", "refs/heads/main", OLD, NEW)
    assert not valid_pass(value, None, "refs/heads/main", OLD, NEW)
    assert not valid_pass(
        f"refs/heads/main {OLD} {NEW} {'0' * 64}", key, "refs/heads/main", OLD, NEW
    )
    assert not valid_pass("", key, "refs/heads/main", OLD, NEW)


def test_a_bare_repository_and_a_linked_worktree_find_their_key(
    repo: Path, tmp_path: Path, git
) -> None:
    bare = tmp_path / "shared.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    ensure_key(bare)
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    ensure_key(repo / ".git")

    assert PASS_ENV in pass_env(bare, "refs/heads/main", OLD, NEW)
    assert PASS_ENV in pass_env(linked, "refs/heads/main", OLD, NEW)
    assert pass_env(tmp_path / "not-a-repo", "refs/heads/main", OLD, NEW) == {}
