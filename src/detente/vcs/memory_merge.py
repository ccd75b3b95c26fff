"""Integrating a claim over memory commits: a merge whose two sides cannot conflict.

Memory writes are commits on the integration branch (:mod:`detente.vcs.memory_commit`),
so the branch moves while a claim collects its evidence. A claim never changes a
registered memory document (the pre-commit guard and the evidence refuse it), so when
every commit between the tip the claim read and the tip now is one of detente's memory
commits (author ``detente``, a ``Detente-Memory`` trailer, only registered documents
changed), the claim's head and those commits touch disjoint paths. Instead of sending
the claim back to rebase (where it could lose the race to the next memory write forever)
the integration is a merge commit built with plumbing: the claim's tree with the memory
documents as the tip has them, parents ``[tip, head]``. The branch still only moves
forward (the tip is the merge's first parent).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Collection
from pathlib import Path

from detente.vcs.git import Git
from detente.vcs.memory_commit import IDENTITY, MEMORY_TRAILER, read_files

__all__ = ["memory_commits_only", "merge_over_memory"]


def memory_commits_only(repo: Path, old: str, new: str, documents: Collection[str]) -> bool:
    """Whether ``old..new`` is one or more detente memory commits changing only
    ``documents`` (and ``old`` is an ancestor of ``new``)."""
    git = Git(repo)
    if not git.run("merge-base", "--is-ancestor", old, new, check=False).ok:
        return False
    log = git.run("log", "--format=%an%x1f%B%x1e", f"{old}..{new}", check=False)
    if not log.ok:
        return False
    commits = [c for c in log.stdout.split("\x1e") if c.strip()]
    if not commits or any(
        not c.lstrip().startswith("detente\x1f") or f"{MEMORY_TRAILER}:" not in c for c in commits
    ):
        return False
    changed = git.run("diff", "--name-only", "-z", "--no-renames", old, new, check=False)
    return changed.ok and set(filter(None, changed.stdout.split("\0"))) <= set(documents)


def merge_over_memory(
    repo: Path, tip: str, head: str, documents: Collection[str], message: str
) -> str:
    """The merge commit of ``head`` onto ``tip`` (see the module docstring); its OID.

    Raises:
        VcsError: ``vcs_error`` when git fails.
    """
    git = Git(repo)
    files = read_files(repo, tip, documents)
    fd, index = tempfile.mkstemp(prefix="detente-merge-index.")
    os.close(fd)
    os.unlink(index)
    env = {"GIT_INDEX_FILE": index}
    try:
        git.run("read-tree", head, env=env)
        args: list[str] = []
        gone: list[str] = []
        for path, found in files.items():
            if found is None:
                gone.append(path)
            else:
                args += ["--cacheinfo", f"{found.mode},{found.blob},{path}"]
        if args:
            git.run("update-index", "--add", *args, env=env)
        if gone:
            git.run("update-index", "--force-remove", "--", *gone, env=env)
        tree = git.text("write-tree", env=env)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(index)
    return git.text(
        "commit-tree",
        "--no-gpg-sign",
        tree,
        "-p",
        tip,
        "-p",
        head,
        "-F",
        "-",
        input=message.encode(),
        env=IDENTITY,
    )
