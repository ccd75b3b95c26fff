"""format-patch out, ``git am --3way`` in: the fallback applies, a conflict leaves no trace."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from detente.domain.gates.patches import mbox_commits, mbox_files
from detente.errors import ValidationError
from detente.vcs.patches import apply_patch, format_patch

GitRunner = Callable[..., str]
Commit = Callable[..., str]


LINES = ["a = 1", "b = 2", "c = 3", "d = 4", "e = 5", "f = 6", "g = 7"]


def _text(**changed: str) -> str:
    return "".join(f"{changed.get(line[0], line)}\n" for line in LINES)


def _patch_of_line_two(repo: Path, git: GitRunner, commit: Commit) -> tuple[str, str]:
    """A commit on branch ``work`` changing line 2 of a 7-line src/app.py; (base, mbox)."""
    base = commit(repo, "src/app.py", _text(), "seven lines")
    git(repo, "switch", "-q", "-c", "work")
    commit(repo, "src/app.py", _text(b="b = 20"), "b is twenty")
    mbox = format_patch(repo, base)
    git(repo, "switch", "-q", "main")
    return base, mbox


def test_the_three_way_fallback_applies_a_patch_after_main_moved(
    repo: Path, git: GitRunner, commit: Commit
) -> None:
    _, mbox = _patch_of_line_two(repo, git, commit)
    # main changes a line of the patch's context (not next to its change).
    commit(repo, "src/app.py", _text(e="e = 50"), "e is fifty")
    plain = subprocess.run(
        ["git", "apply", "--check"], cwd=repo, input=mbox, text=True, capture_output=True
    )
    assert plain.returncode != 0  # a plain apply refuses: only the 3-way merge places it

    result = apply_patch(repo, mbox)

    assert result.applied and result.head_after != result.head_before
    assert (repo / "src/app.py").read_text() == _text(b="b = 20", e="e = 50")
    assert git(repo, "log", "-1", "--format=%s") == "b is twenty"


def test_a_conflicting_patch_leaves_the_worktree_clean_and_names_the_file(
    repo: Path, git: GitRunner, commit: Commit
) -> None:
    _, mbox = _patch_of_line_two(repo, git, commit)
    head = commit(repo, "src/app.py", _text(b="b = 99"), "b is ninety-nine")

    result = apply_patch(repo, mbox)

    assert not result.applied
    assert result.conflicts == ("src/app.py",)
    assert result.head_after == head == git(repo, "rev-parse", "HEAD")
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "src/app.py").read_text() == _text(b="b = 99")
    assert not (repo / ".git" / "rebase-apply").exists()


def test_a_worktree_with_uncommitted_changes_is_refused_before_anything_runs(
    repo: Path, git: GitRunner, commit: Commit
) -> None:
    _, mbox = _patch_of_line_two(repo, git, commit)
    (repo / "README.md").write_text("local edit\n")
    with pytest.raises(ValidationError) as caught:
        apply_patch(repo, mbox)
    assert caught.value.field == "worktree"
    assert (repo / "README.md").read_text() == "local edit\n"


def test_the_server_reads_files_and_commits_from_the_mbox_itself(
    repo: Path, git: GitRunner, commit: Commit
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    commit(repo, "docs/new file.md", "x\n", "add a file with a space")
    git(repo, "mv", "docs/guide.md", "docs/renamed.md")
    git(repo, "commit", "-q", "-m", "rename")
    commit(repo, "src/café.py", "x = 1\n", "unicode name")
    mbox = format_patch(repo, base)
    assert mbox_commits(mbox) == 3
    assert mbox_files(mbox) == (
        "docs/guide.md",
        "docs/new file.md",
        "docs/renamed.md",
        "src/café.py",
    )
