"""Checkouts follow memory commits off the command path, in commit order: a run of
commits that continue each other is one follow, a give-back runs in its place, and
``settle`` returns once the queue ran (real git repositories)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from detente.service.checkout_follower import CheckoutFollower, FollowJob
from detente.vcs.memory_commit import BranchWriter
from detente.vcs.memory_follow import blob_id


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return out.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "DECISIONS.md").write_bytes(b"# Decisions\n")
    (root / "NOTES.md").write_bytes(b"# Notes\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "init")
    return root


def commits(repo: Path, path: str, versions: list[bytes]) -> list[FollowJob]:
    """One memory commit per version of ``path``, each on the last; their follow jobs."""
    writer = BranchWriter(repo)
    jobs: list[FollowJob] = []
    tip = git(repo, "rev-parse", "main")
    old = git(repo, "rev-parse", f"main:{path}")
    for data in versions:
        new = writer.commit("refs/heads/main", tip, {path: data}, "m\n")
        jobs.append(FollowJob(repo, "refs/heads/main", tip, new, {path: old}, {path: data}))
        tip, old = new, blob_id(data)
    return jobs


def test_commits_that_continue_each_other_join_into_one_follow_from_first_to_last(
    repo: Path,
) -> None:
    jobs = commits(repo, "DECISIONS.md", [b"# Decisions\n- a\n", b"# Decisions\n- a\n- b\n"])
    jobs += commits(repo, "NOTES.md", [b"# Notes\n- n\n"])

    one = jobs[0].then(jobs[1])
    assert one is not None and (one := one.then(jobs[2])) is not None
    assert (one.old_tip, one.new_tip) == (jobs[0].old_tip, jobs[2].new_tip)
    assert one.old_blobs == {**jobs[2].old_blobs, **jobs[0].old_blobs}  # each path's oldest
    assert one.files == {"DECISIONS.md": b"# Decisions\n- a\n- b\n", "NOTES.md": b"# Notes\n- n\n"}
    assert jobs[1].then(jobs[0]) is None  # not a continuation


def test_queued_commits_are_followed_in_order_and_settle_waits_for_them(repo: Path) -> None:
    jobs = commits(repo, "DECISIONS.md", [b"# Decisions\n- a\n", b"# Decisions\n- a\n- b\n"])
    jobs += commits(repo, "NOTES.md", [b"# Notes\n- n\n"])
    follower = CheckoutFollower()

    for job in jobs:
        follower.submit("demo", job)
    assert follower.settle("demo", timeout=30)

    assert 1 <= follower.follows <= 3 and follower.settled("demo")
    assert (repo / "DECISIONS.md").read_bytes() == b"# Decisions\n- a\n- b\n"
    assert (repo / "NOTES.md").read_bytes() == b"# Notes\n- n\n"
    assert git(repo, "status", "--porcelain") == ""


def test_a_commit_that_gives_an_edit_back_is_followed_alone_in_its_place(repo: Path) -> None:
    first, second = commits(repo, "DECISIONS.md", [b"# D\n- merged\n", b"# D\n- merged\n- c\n"])
    human = b"# D\n- the human's edit\n"
    (repo / "DECISIONS.md").write_bytes(human)
    gives = FollowJob(
        first.root,
        first.ref,
        first.old_tip,
        first.new_tip,
        first.old_blobs,
        first.files,
        adopted=((repo, "DECISIONS.md", human, b"# D\n- merged\n"),),
    )
    follower = CheckoutFollower()

    follower.submit("demo", gives)
    follower.submit("demo", second)
    assert follower.settle("demo", timeout=30)

    assert gives.then(second) is None  # the give-back comes before the next follow
    assert (repo / "DECISIONS.md").read_bytes() == b"# D\n- merged\n- c\n"
    assert git(repo, "status", "--porcelain") == ""


def test_a_repository_with_nothing_queued_is_settled_at_once() -> None:
    follower = CheckoutFollower()

    assert follower.settled("demo") and follower.settle("demo", timeout=0)
