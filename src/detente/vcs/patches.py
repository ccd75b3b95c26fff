"""Patch artifacts on the execution plane: ``git format-patch`` out, ``git am --3way`` in.

:func:`apply_patch` never leaves a half-applied patch behind: when ``git am --3way``
cannot apply the series, the conflicting files are collected, the session is aborted
(``git am --abort`` restores HEAD, the index and the working tree), and the result says
which files conflicted. A worktree with uncommitted changes to tracked files is refused
before anything runs, so "clean after a failure" means exactly what it meant before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from detente.errors import ValidationError
from detente.vcs.git import Git

__all__ = ["ApplyResult", "apply_patch", "format_patch"]

_FAILED_AT = re.compile(r"^error: patch failed: (.+):\d+$", re.MULTILINE)
_CONFLICT_IN = re.compile(r"^CONFLICT \([^)]*\): .*? in (.+)$", re.MULTILINE)
_NOT_IN_INDEX = re.compile(r"^error: (.+): does not exist in index$", re.MULTILINE)


@dataclass(frozen=True)
class ApplyResult:
    """What ``git am --3way`` did.

    Attributes:
        applied: every commit of the patch was applied.
        head_before: HEAD before the attempt.
        head_after: HEAD after it (equal to ``head_before`` when not applied).
        conflicts: files that could not be merged (empty when applied).
        message: git's first error line when not applied.
    """

    applied: bool
    head_before: str
    head_after: str
    conflicts: tuple[str, ...] = field(default_factory=tuple)
    message: str = ""


def format_patch(worktree: Path, base: str, head: str = "HEAD") -> str:
    """The commits ``base..head`` as one ``git format-patch --stdout`` mbox.

    Args:
        worktree: a directory inside the working tree holding the commits.
        base: the exclusive start (a claim's base commit).
        head: the inclusive end.

    Returns:
        The mbox text (empty when there are no commits).

    Raises:
        VcsError: ``vcs_error`` when git fails (e.g. an unknown revision).
    """
    git = Git(worktree)
    out = git.run("format-patch", "--stdout", "--no-signature", "--binary", f"{base}..{head}")
    return out.stdout


def apply_patch(worktree: Path, mbox: str) -> ApplyResult:
    """Apply an mbox with ``git am --3way`` in ``worktree``, or leave it exactly as it was.

    Args:
        worktree: a directory inside the working tree to apply in.
        mbox: ``git format-patch`` output.

    Returns:
        The :class:`ApplyResult`; on failure HEAD, index and working tree are unchanged.

    Raises:
        ValidationError: ``validation_error`` (field ``worktree``) when tracked files have
            uncommitted changes, or a patch session is already in progress.
        VcsError: ``vcs_error`` when git fails otherwise.
    """
    git = Git(worktree)
    dirty = git.run("status", "--porcelain", "--untracked-files=no", "-z").stdout
    if dirty:
        raise ValidationError(
            f"{worktree} has uncommitted changes to tracked files: commit or stash them "
            "before applying a patch",
            field="worktree",
        )
    in_progress = Path(git.text("rev-parse", "--git-path", "rebase-apply"))
    if (in_progress if in_progress.is_absolute() else git.cwd / in_progress).exists():
        raise ValidationError(
            f"a git am or rebase is already in progress in {worktree}", field="worktree"
        )
    before = git.text("rev-parse", "HEAD")
    result = git.run(
        "am", "--3way", "--quiet", input=mbox.encode("utf-8", "surrogateescape"), check=False
    )
    if result.ok:
        return ApplyResult(True, before, git.text("rev-parse", "HEAD"))
    unmerged = git.run("diff", "--name-only", "--diff-filter=U", "-z", check=False).stdout
    text = result.stdout + "\n" + result.stderr
    conflicts = {p for p in unmerged.split("\0") if p}
    for pattern in (_FAILED_AT, _CONFLICT_IN, _NOT_IN_INDEX):
        conflicts.update(m.strip() for m in pattern.findall(text))
    git.run("am", "--abort", check=False)
    after = git.text("rev-parse", "HEAD")
    first = next((line for line in text.splitlines() if line.startswith(("error:", "fatal:"))), "")
    return ApplyResult(False, before, after, tuple(sorted(conflicts)), first)
