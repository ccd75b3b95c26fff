"""Memory commits made with plumbing, checkouts following them, and integration over them,
on real git repositories (``git`` itself is the oracle)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from detente.errors import StaleBase
from detente.vcs.memory_commit import BranchWriter, read_files, tip_of
from detente.vcs.memory_follow import blob_id, checkout_copies, follow_checkouts
from detente.vcs.memory_merge import memory_commits_only, merge_over_memory

GitRunner = Callable[..., str]


def test_a_memory_commit_moves_the_branch_without_touching_any_checkout(
    repo: Path, git: GitRunner
) -> None:
    tip = git(repo, "rev-parse", "main")

    new = BranchWriter(repo).commit(
        "refs/heads/main", tip, {"docs/guide.md": b"one\ntwo\nthree\n"}, "m\n\nDetente-Memory: x\n"
    )

    assert git(repo, "rev-parse", "main") == new and git(repo, "rev-parse", f"{new}^") == tip
    assert git(repo, "show", "main:docs/guide.md") == "one\ntwo\nthree"
    assert git(repo, "log", "-1", "--format=%an", new) == "detente"
    assert (repo / "docs" / "guide.md").read_text() == "one\ntwo\n"  # no checkout involved
    assert read_files(repo, new, ["docs/guide.md", "nope.md"])["nope.md"] is None


def test_a_memory_commit_on_a_moved_branch_is_stale_base_and_moves_nothing(
    repo: Path, git: GitRunner, commit: Callable[..., str]
) -> None:
    tip = git(repo, "rev-parse", "main")
    moved = commit(repo, "src/app.py", "a = 9\n")

    with pytest.raises(StaleBase) as lost:
        BranchWriter(repo).commit("refs/heads/main", tip, {"README.md": b"x\n"}, "m\n")

    assert lost.value.extra["actual"] == moved
    assert tip_of(repo, "refs/heads/main") == moved


def test_a_clean_checkout_follows_and_an_edited_one_is_left_and_reported(
    repo: Path, git: GitRunner
) -> None:
    tip = git(repo, "rev-parse", "main")
    old = git(repo, "rev-parse", f"{tip}:docs/guide.md")
    first = BranchWriter(repo).commit("refs/heads/main", tip, {"docs/guide.md": b"v2\n"}, "m\n")
    left = follow_checkouts(
        repo, "refs/heads/main", {"docs/guide.md": old}, {"docs/guide.md": b"v2\n"}
    )
    assert left == [] and (repo / "docs" / "guide.md").read_text() == "v2\n"
    assert git(repo, "status", "--porcelain") == ""

    (repo / "docs" / "guide.md").write_text("a person's edit\n")
    second = BranchWriter(repo).commit("refs/heads/main", first, {"docs/guide.md": b"v3\n"}, "m\n")
    [copy] = follow_checkouts(
        repo,
        "refs/heads/main",
        {"docs/guide.md": blob_id(b"v2\n")},
        {"docs/guide.md": b"v3\n"},
        commits=(first, second),
    )

    assert copy.state == "edited" and copy.data == b"a person's edit\n"
    assert (repo / "docs" / "guide.md").read_text() == "a person's edit\n"  # kept
    [seen] = checkout_copies(repo, "refs/heads/main", {"docs/guide.md": blob_id(b"v3\n")})
    assert seen.state == "edited" and seen.index_blob == blob_id(b"v2\n")


def test_only_detentes_memory_commits_let_a_claim_integrate_as_a_merge(
    repo: Path, git: GitRunner, commit: Callable[..., str]
) -> None:
    base = git(repo, "rev-parse", "main")
    git(repo, "checkout", "-q", "-b", "claim")
    head = commit(repo, "src/app.py", "a = 2\n")
    git(repo, "checkout", "-q", "main")
    memory = BranchWriter(repo).commit(
        "refs/heads/main",
        base,
        {"docs/guide.md": b"v2\n"},
        "m\n\nDetente-Memory: docs/guide.md r2\n",
    )

    assert memory_commits_only(repo, base, memory, ["docs/guide.md"])
    assert not memory_commits_only(repo, base, memory, ["README.md"])  # not a document
    merged = merge_over_memory(repo, memory, head, ["docs/guide.md"], "integrate\n")
    assert git(repo, "rev-parse", f"{merged}^1", f"{merged}^2").split() == [memory, head]
    assert git(repo, "show", f"{merged}:docs/guide.md") == "v2"
    assert git(repo, "show", f"{merged}:src/app.py") == "a = 2"

    git(repo, "update-ref", "refs/heads/main", merged, memory)
    person = commit(repo, "README.md", "# changed\n")
    assert not memory_commits_only(repo, base, person, ["docs/guide.md"])


def test_a_checkout_holding_a_version_its_queued_follows_bring_is_behind_not_edited(
    repo: Path, git: GitRunner
) -> None:
    tip = git(repo, "rev-parse", "main")
    writer = BranchWriter(repo)
    second = writer.commit("refs/heads/main", tip, {"docs/guide.md": b"v2\n"}, "m\n")
    writer.commit("refs/heads/main", second, {"docs/guide.md": b"v3\n"}, "m\n")
    (repo / "docs" / "guide.md").write_bytes(b"v2\n")  # a follow halfway: file, not index
    tips = {"docs/guide.md": blob_id(b"v3\n")}

    [seen] = checkout_copies(repo, "refs/heads/main", tips)
    [queued] = checkout_copies(repo, "refs/heads/main", tips, following={blob_id(b"v2\n")})

    assert seen.state == "edited"  # what a follow halfway looks like
    assert queued.state == "behind" and queued.index_blob == blob_id(b"v2\n")
