"""Finding a working tree from git's own files, without starting git.

An agent harness runs ``detente hook-harness`` before every edit, and each git process it
starts costs a few milliseconds of a budget of 100 (#31). In the two layouts almost every
repository has, the answer ``git rev-parse --show-toplevel --git-common-dir`` gives can be
read from files git documents (gitrepository-layout(5), "gitfile" and ``commondir``):

- a main working tree: ``<top>/.git`` is the git directory, which is the common one;
- a linked worktree (``git worktree add``): ``<top>/.git`` is a file ``gitdir: <dir>``,
  and ``<dir>/commondir`` names the common directory relative to ``<dir>``.

Anything else returns None and the caller asks git (:func:`detente.vcs.repo.open_repo`):
a bare repository, a path inside a ``.git`` directory, a submodule (its gitfile has no
``commondir``), a common directory not named ``.git`` (``git worktree list`` names the
main worktree then), a ``.git`` owned by another user (git's ``safe.directory`` decides),
a search that would cross into another file system (git stops there unless
``GIT_DISCOVERY_ACROSS_FILESYSTEM`` says otherwise). The search stops below the nearest
``GIT_CEILING_DIRECTORIES`` entry, as git's does (git(1), "ENVIRONMENT").
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

__all__ = ["Layout", "find_layout"]

#: Longest gitfile or ``commondir`` file read (bytes): a path, never more.
_MAX_POINTER = 4096


class Layout(NamedTuple):
    """Where a working tree's git files are (all absolute, symlinks resolved).

    Attributes:
        top: the working tree's top level (``git rev-parse --show-toplevel``).
        common_dir: the git directory every worktree shares (``--git-common-dir``).
        main_worktree: the main working tree's top level (the parent of ``common_dir``).
    """

    top: Path
    common_dir: Path
    main_worktree: Path


def find_layout(start: Path) -> Layout | None:
    """The layout of the working tree holding directory ``start``, or None when it is not
    one of the two plain layouts (see the module docstring): the caller then asks git.

    Never raises for a path it cannot read: an unreadable file is "ask git" too.
    """
    try:
        here = start.resolve()
        for top in _candidates(here):
            if top is None:
                return None  # the search would reach another file system: git decides
            dot_git = top / ".git"
            if dot_git.is_dir():
                common = dot_git
                break
            if dot_git.is_file():
                found = _linked(dot_git)
                if found is None:
                    return None
                common = found
                break
        else:
            return None
        if ".git" in here.relative_to(top).parts or common.name != ".git":
            return None
        if dot_git.stat().st_uid != os.geteuid() or not (common / "HEAD").is_file():
            return None
    except (OSError, ValueError, RuntimeError):  # RuntimeError: a symlink loop
        return None
    return Layout(top, common, common.parent)


def _candidates(here: Path) -> Iterator[Path | None]:
    """The directories git's discovery looks in, nearest first: ``here``, then its parents
    strictly below the nearest ceiling (``GIT_CEILING_DIRECTORIES``: absolute paths,
    colon-separated). None before a parent on another file system: git stops there
    unless ``GIT_DISCOVERY_ACROSS_FILESYSTEM`` is set, so git decides."""
    ceilings = {
        Path(entry).resolve()
        for entry in os.environ.get("GIT_CEILING_DIRECTORIES", "").split(":")
        if entry and os.path.isabs(entry)
    }
    yield here
    device = here.stat().st_dev
    for parent in here.parents:
        if parent in ceilings:
            return
        if parent.stat().st_dev != device:
            yield None
            return
        yield parent


def _linked(gitfile: Path) -> Path | None:
    """The common directory a linked worktree's gitfile leads to, or None."""
    text = _read_pointer(gitfile)
    if text is None or not text.startswith("gitdir: "):
        return None
    gitdir = Path(text.removeprefix("gitdir: "))
    if not gitdir.is_absolute():
        gitdir = gitfile.parent / gitdir
    common = _read_pointer(gitdir / "commondir")
    if common is None or not common:
        return None  # a submodule's own git directory: git decides
    named = Path(common)
    return (named if named.is_absolute() else gitdir / named).resolve()


def _read_pointer(path: Path) -> str | None:
    """The first line of a small pointer file, without its line end; None if unreadable."""
    try:
        with path.open("rb") as f:
            data = f.read(_MAX_POINTER + 1)
    except OSError:
        return None
    if len(data) > _MAX_POINTER:
        return None
    try:
        return data.decode().split("\n", 1)[0].rstrip("\r")
    except UnicodeDecodeError:
        return None
