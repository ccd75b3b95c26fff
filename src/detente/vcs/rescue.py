"""Saving a claim's uncommitted work, and pruning one abandoned worktree entry.

A takeover may reuse or clean a predecessor's worktree; before it does, every uncommitted
change (staged, unstaged and untracked, ``.gitignore`` respected) is saved under a durable
ref ``refs/detente/rescue/<claim id>``, shaped like a ``git stash`` entry so that standard
tools can restore it:

- commit ``I``: the index as it was (parent: ``HEAD``), i.e. the staged state;
- commit ``W``: the whole working tree including untracked files (parents: ``HEAD``, ``I``).

The ref points at ``W``. ``git checkout <W> -- .`` (or ``git archive <W>``) gives the files
back byte for byte; ``git diff <W>^1 <W>`` shows everything the predecessor had not
committed. The worktree itself is never modified.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from detente.errors import ValidationError
from detente.vcs.git import Git
from detente.vcs.worktrees import list_worktrees

RESCUE_PREFIX = "refs/detente/rescue/"

_IDENTITY = {
    "GIT_AUTHOR_NAME": "detente",
    "GIT_AUTHOR_EMAIL": "detente@localhost",
    "GIT_COMMITTER_NAME": "detente",
    "GIT_COMMITTER_EMAIL": "detente@localhost",
}


@dataclass(frozen=True)
class Rescue:
    """A saved dirty state: ``ref`` -> ``oid`` (the ``W`` commit), and the paths it holds."""

    ref: str
    oid: str
    paths: list[str]


def rescue_ref(claim_id: str) -> str:
    """``refs/detente/rescue/<claim id>`` (validated as a ref name).

    Raises:
        ValidationError: the claim id cannot be part of a ref name.
    """
    if not claim_id or any(c in claim_id for c in " ~^:?*[\\") or ".." in claim_id:
        raise ValidationError(f"claim id {claim_id!r} cannot name a ref", field="claimId")
    return RESCUE_PREFIX + claim_id


def dirty_paths(worktree: Path) -> list[str]:
    """Paths with staged, unstaged or untracked changes (empty when clean)."""
    out = (
        Git(worktree)
        .run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
        .stdout
    )
    entries = [e for e in out.split("\0") if e]
    return sorted({e[3:] for e in entries if len(e) > 3})


def rescue_dirty_state(
    worktree: Path, claim_id: str, *, message: str | None = None
) -> Rescue | None:
    """Save the worktree's uncommitted changes under ``refs/detente/rescue/<claim id>``.

    Args:
        worktree: the predecessor's worktree (must exist).
        claim_id: whose work it is (names the ref).
        message: commit message; defaults to a line naming the claim.

    Returns:
        The :class:`Rescue`, or None when the worktree has nothing uncommitted.

    Raises:
        VcsError: ``vcs_error`` when git fails (nothing is changed in the worktree).
        ValidationError: bad claim id.
    """
    ref = rescue_ref(claim_id)
    paths = dirty_paths(worktree)
    if not paths:
        return None
    git = Git(worktree)
    head = git.text("rev-parse", "--verify", "HEAD^{commit}")
    text = message or f"detente rescue of claim {claim_id}"
    env = dict(_IDENTITY)
    index_tree = git.text("write-tree")
    index_commit = git.text(
        "commit-tree", index_tree, "-p", head, "-m", f"index of {text}", env=env
    )
    real_index = Path(git.text("rev-parse", "--path-format=absolute", "--git-path", "index"))
    with tempfile.TemporaryDirectory(prefix="detente-rescue-") as tmp:
        scratch = Path(tmp) / "index"
        if real_index.exists():
            shutil.copyfile(real_index, scratch)
        scratch_env = {**env, "GIT_INDEX_FILE": os.fspath(scratch)}
        git.run("add", "-A", "--", ".", env=scratch_env)
        tree = git.text("write-tree", env=scratch_env)
    work_commit = git.text("commit-tree", tree, "-p", head, "-p", index_commit, "-m", text, env=env)
    git.run("update-ref", "-m", text, ref, work_commit)
    return Rescue(ref=ref, oid=work_commit, paths=paths)


def is_linked_worktree(repo: Path, path: Path) -> bool:
    """True when ``path`` is a registered linked worktree of ``repo`` (never the main one).

    A claim's ``worktree`` field is what its client said; detente only touches a path that
    git itself lists as one of this repository's linked worktrees.
    """
    target = os.path.normcase(os.path.abspath(path))
    entries = list_worktrees(repo)
    return any(
        os.path.normcase(os.path.abspath(e.path)) == target for e in entries[1:] if not e.bare
    )


def remove_one_worktree(repo: Path, path: Path) -> bool:
    """Unlock and remove ONE worktree entry (present or missing); its branch is kept.

    Call :func:`rescue_dirty_state` first: uncommitted changes in it are discarded.

    Returns:
        True when the entry existed and was removed.
    """
    target = os.path.normcase(os.path.abspath(path))
    for entry in list_worktrees(repo):
        if os.path.normcase(os.path.abspath(entry.path)) != target:
            continue
        git = Git(repo)
        if entry.locked is not None:
            git.run("worktree", "unlock", os.fspath(entry.path))
        git.run("worktree", "remove", "--force", os.fspath(entry.path))
        return True
    return False


def prune_missing_worktree(repo: Path, path: Path) -> bool:
    """Unlock and remove ONE worktree entry whose directory is gone, releasing its branch.

    Other entries (including other missing, locked ones) are left alone: this never runs
    ``git worktree prune``.

    Returns:
        True when the entry existed with its directory missing and was removed.
    """
    if path.exists():
        return False
    return remove_one_worktree(repo, path)
