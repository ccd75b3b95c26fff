"""One long-running ``git cat-file --batch-check`` answers whether a full id is a commit."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from detente.vcs.commit_batch import CommitBatch, CommitBatches

from source_repo import commit_all, git, make_source_repo


def test_a_commit_is_confirmed_and_a_blob_or_an_unknown_id_is_not(tmp_path: Path) -> None:
    head = make_source_repo(tmp_path / "repo")
    blob = git(tmp_path / "repo", "rev-parse", f"{head}:{sorted(_files(tmp_path / 'repo'))[0]}")
    batch = CommitBatch(tmp_path / "repo")
    assert batch.is_commit(head) is True
    assert batch.is_commit(blob) is False
    assert batch.is_commit("f" * 40) is False
    assert batch.starts == 1  # one process answered all three
    batch.close()


def test_a_name_that_is_not_a_full_hex_id_gets_no_answer_and_starts_nothing(
    tmp_path: Path,
) -> None:
    head = make_source_repo(tmp_path / "repo")
    batch = CommitBatch(tmp_path / "repo")
    for name in ("HEAD", "main", head[:12], head.upper(), f"{head}\n{head}", ""):
        assert batch.is_commit(name) is None
    assert batch.starts == 0


def test_a_commit_made_after_the_process_started_is_found(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_source_repo(repo)
    batch = CommitBatch(repo)
    assert batch.is_commit("0" * 40) is False  # started
    (repo / "new.txt").write_text("new\n")
    later = commit_all(repo, "a later commit")
    assert batch.is_commit(later) is True
    assert batch.starts == 1
    batch.close()


def test_a_killed_process_is_replaced_by_the_next_question(tmp_path: Path) -> None:
    head = make_source_repo(tmp_path / "repo")
    batch = CommitBatch(tmp_path / "repo")
    assert batch.is_commit(head) is True
    pid = batch.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    answers = [batch.is_commit(head) for _ in range(2)]
    # The first question may still reach the dying process (no answer: the caller falls
    # back to rev-parse); from then on a new process answers.
    assert answers[-1] is True and answers[0] in (True, None)
    assert batch.starts == 2 and batch.pid not in (None, pid)
    batch.close()
    assert batch.pid is None


def test_outside_a_repository_there_is_no_answer(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    batch = CommitBatch(tmp_path / "plain")
    assert batch.is_commit("a" * 40) is None


def test_batches_keep_one_process_per_repository(tmp_path: Path) -> None:
    first = make_source_repo(tmp_path / "one")
    second = make_source_repo(tmp_path / "two")
    batches = CommitBatches()
    assert batches.is_commit(tmp_path / "one", first) is True
    assert batches.is_commit(tmp_path / "two", second) is True
    assert batches.is_commit(tmp_path / "one", first) is True
    assert batches.batch(tmp_path / "one").starts == 1
    assert batches.batch(tmp_path / "two").starts == 1
    batches.close()
    assert batches.batch(tmp_path / "one").pid is None


def _files(repo: Path) -> list[str]:
    return git(repo, "ls-files").splitlines()


def test_a_process_holding_over_a_thousand_descriptors_still_gets_answers(tmp_path: Path) -> None:
    head = make_source_repo(tmp_path / "repo")
    held = []
    try:
        while not held or held[-1] < 1100:  # the pipes to git are numbered above 1024
            held.append(os.open(os.devnull, os.O_RDONLY))
        batch = CommitBatch(tmp_path / "repo")
        assert batch.is_commit(head) is True
        assert batch.is_commit("f" * 40) is False
        batch.close()
    finally:
        for fd in held:
            os.close(fd)
