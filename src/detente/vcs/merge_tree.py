"""Predicted merges: ``git merge-tree --write-tree`` of two commits, nothing checked out.

``git merge-tree --write-tree A B`` (git 2.38 and later) merges two commits the way
``git merge`` would (the same merge base, the same ``ort`` strategy) but only writes
objects: no index, no worktree, no ref moves. Its exit status says whether the merge
is clean (0) or conflicted (1); with ``--name-only -z`` its output is the result
tree's OID, the conflicted paths and then the informational messages, each
NUL-terminated. The result tree holds each conflicted file with conflict markers,
from which the conflicting hunks (``<<<<<<<`` to ``>>>>>>>``) are read as the witness.

Used by :mod:`detente.service.merge_checks` (a claim's branch against the integration
branch and against the branches of the live claims that share a directory with it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from detente.vcs.git import Git, GitError

__all__ = ["ConflictHunk", "MergePrediction", "branch_changes", "predict_merge"]

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
#: At most this many conflicted files have their hunks read (each costs a git call).
MAX_HUNK_FILES = 8
#: At most this many lines of one hunk are kept (the rest is cut with a note).
MAX_HUNK_LINES = 40
#: At most this many hunks are kept per file.
MAX_HUNKS_PER_FILE = 4


@dataclass(frozen=True)
class ConflictHunk:
    """One conflicting region of a file as ``git merge`` would leave it.

    Attributes:
        path: the repo-relative path.
        line: the 1-based line of the ``<<<<<<<`` marker in the merged file.
        text: the region, markers included (at most :data:`MAX_HUNK_LINES` lines).
    """

    path: str
    line: int
    text: str


@dataclass(frozen=True)
class MergePrediction:
    """What merging ``theirs`` into ``ours`` would do.

    Attributes:
        ours: the first commit (full OID).
        theirs: the second commit (full OID).
        clean: True when git merges them without a conflict.
        files: the conflicted paths, sorted (empty when clean).
        hunks: the conflicting regions of up to :data:`MAX_HUNK_FILES` files.
    """

    ours: str
    theirs: str
    clean: bool
    files: tuple[str, ...] = ()
    hunks: tuple[ConflictHunk, ...] = ()


def predict_merge(git: Git, ours: str, theirs: str, *, timeout: float = 10.0) -> MergePrediction:
    """Merge ``ours`` and ``theirs`` in git's object store only.

    Args:
        git: git in the repository (any worktree of it).
        ours: a commit (an OID or a ref).
        theirs: another commit.
        timeout: seconds before git is killed.

    Returns:
        The :class:`MergePrediction` (``ours``/``theirs`` as given).

    Raises:
        GitError: ``vcs_error`` when git cannot merge them at all (an unknown commit,
            histories with no merge base) or fails otherwise.
    """
    out = git.run(
        "merge-tree",
        "--write-tree",
        "--name-only",
        "-z",
        ours,
        theirs,
        check=False,
        timeout=timeout,
    )
    tree, files = _parse(out.stdout)
    # git also exits 1 when it cannot merge at all (an unknown commit): then there is no
    # result tree to name.
    if out.returncode not in (0, 1) or not _OID.fullmatch(tree):
        raise out.error()
    if out.returncode == 0:
        return MergePrediction(ours, theirs, clean=True)
    hunks: list[ConflictHunk] = []
    for path in files[:MAX_HUNK_FILES]:
        hunks.extend(_hunks(git, tree, path))
    return MergePrediction(ours, theirs, clean=False, files=files, hunks=tuple(hunks))


def _parse(stdout: str) -> tuple[str, tuple[str, ...]]:
    """``(result tree, conflicted paths)`` from ``--name-only -z`` output."""
    head, _, _messages = stdout.partition("\0\0")
    parts = head.split("\0")
    return parts[0], tuple(sorted(dict.fromkeys(p for p in parts[1:] if p)))


def _hunks(git: Git, tree: str, path: str) -> list[ConflictHunk]:
    """The conflict-marked regions of ``path`` in the merge's result ``tree``."""
    try:
        text = git.run("cat-file", "blob", f"{tree}:{path}", timeout=10.0).stdout
    except GitError:
        return []  # a modify/delete or rename conflict leaves no marked file
    out: list[ConflictHunk] = []
    lines = text.splitlines()
    start: int | None = None
    for number, line in enumerate(lines, 1):
        if line.startswith("<<<<<<< ") and start is None:
            start = number
        elif line.startswith(">>>>>>> ") and start is not None:
            region = lines[start - 1 : number]
            if len(region) > MAX_HUNK_LINES:
                cut = len(region) - MAX_HUNK_LINES + 1
                region = [*region[: MAX_HUNK_LINES - 1], f"... ({cut} more lines)"]
            out.append(ConflictHunk(path, start, "\n".join(region)))
            start = None
            if len(out) == MAX_HUNKS_PER_FILE:
                break
    return out


def branch_changes(git: Git, base: str, head: str) -> tuple[str, ...]:
    """Paths the commits ``base..head`` change (the net diff of ``base`` and ``head``;
    renames as both paths), sorted.

    Raises:
        GitError: ``vcs_error`` when git fails (an unknown commit).
    """
    out = git.run("diff", "--name-only", "-z", "--no-renames", base, head, timeout=10.0)
    return tuple(sorted({p for p in out.stdout.split("\0") if p}))
