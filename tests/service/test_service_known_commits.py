"""A full commit id git confirmed once is not asked of git again; anything else always is."""

from __future__ import annotations

from pathlib import Path

import pytest

from detente.errors import ValidationError
from detente.service.known_commits import KnownCommits
from detente.vcs.commit_batch import CommitBatches
from detente.vcs.repo import resolve_commit

from source_repo import make_source_repo


class Counted:
    """The real resolution, counting its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, repo: Path, rev: str) -> str:
        self.calls.append(rev)
        return resolve_commit(repo, rev)


def test_a_confirmed_full_commit_id_is_answered_without_git_and_head_always_asks_git(
    tmp_path: Path,
) -> None:
    head = make_source_repo(tmp_path / "repo")
    real = Counted()
    known = KnownCommits(real)
    assert known(tmp_path / "repo", head) == head
    assert known(tmp_path / "repo", head) == head
    assert known(tmp_path / "repo", "HEAD") == head
    assert known(tmp_path / "repo", "HEAD") == head
    assert real.calls == [head, "HEAD", "HEAD"]


def test_an_unknown_commit_is_refused_every_time_and_never_remembered(tmp_path: Path) -> None:
    make_source_repo(tmp_path / "repo")
    real = Counted()
    known = KnownCommits(real)
    for _ in range(2):
        with pytest.raises(ValidationError) as refused:
            known(tmp_path / "repo", "f" * 40)
        assert refused.value.field == "baseCommit"
    assert real.calls == ["f" * 40, "f" * 40]


def test_the_least_recently_used_id_is_forgotten_past_the_bound(tmp_path: Path) -> None:
    head = make_source_repo(tmp_path / "repo")
    upper = head.upper()  # resolves to another spelling: never remembered
    real = Counted()
    known = KnownCommits(real, bound=1)
    other = tmp_path / "elsewhere"
    make_source_repo(other)
    known(tmp_path / "repo", head)
    known(tmp_path / "repo", upper)
    other_head = resolve_commit(other, "HEAD")
    known(other, other_head)  # evicts the first repository's entry
    known(other, other_head)
    known(tmp_path / "repo", head)
    assert real.calls == [head, upper, other_head, head]


def test_a_full_id_the_check_confirms_needs_no_resolution_and_anything_else_still_does(
    tmp_path: Path,
) -> None:
    head = make_source_repo(tmp_path / "repo")
    real = Counted()
    batches = CommitBatches()
    known = KnownCommits(real, check=batches.is_commit)
    assert known(tmp_path / "repo", head) == head
    assert known(tmp_path / "repo", "HEAD") == head  # not a full id: resolved
    with pytest.raises(ValidationError):  # unknown to the check: resolved, and refused
        known(tmp_path / "repo", "e" * 40)
    assert real.calls == ["HEAD", "e" * 40]
    batches.close()
