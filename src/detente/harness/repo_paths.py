"""The repository-relative name of a file a hook payload names.

A harness names a file absolute or relative to the session's directory, in whatever
spelling the agent chose. :func:`relative_paths` gives the name the claims use, for every
spelling that reaches a file of this repository:

- ``..`` segments: collapsed as the harness's own path handling does (``nope/../x`` is
  ``x`` even when ``nope`` does not exist: a write tool creates the parent first), and as
  the kernel does through a symlinked directory; a file either reading reaches is judged;
- symlinks: followed, a dangling one to the file a write through it would create;
- another worktree of the same repository (the main checkout from a linked worktree, or
  the reverse): the path relative to that worktree, since a claim holds a repository
  path in every checkout of it;
- the repository's git directory (``.git`` of the main checkout, reached from a linked
  worktree whose ``.git`` is a file): named ``.git/...``, one of detente's own files.

Anything else outside the repository is left out (not this repository's).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["relative_paths"]


def relative_paths(top: Path, cwd: Path, paths: Sequence[str]) -> list[str]:
    """``paths`` (absolute, or relative to ``cwd``) relative to the worktree ``top``.

    Returns:
        Repo-relative POSIX paths, once each, in order (a path with two readings, lexical
        and through symlinks, may give two); paths outside the repository are left out.
    """
    out: list[str] = []
    root = top.resolve()
    common = _common_dir(root)
    for path in paths:
        if "\0" in path:
            continue  # no file has this name
        full = Path(path) if Path(path).is_absolute() else cwd / path
        for reading in (_resolved(full), _resolved(Path(os.path.normpath(full)))):
            text = _in_repository(reading, root, common)
            if text and text != ".":
                out.append(text)
    return list(dict.fromkeys(out))


def _resolved(path: Path) -> Path:
    """``path`` as the kernel reads it: every symlink followed, a dangling one to the file
    a write would create, ``..`` after it; a part that does not exist yet taken as named
    (``nope/..`` is dropped: a write tool creates the parent first)."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.normpath(path))


def _in_repository(path: Path, root: Path, common: Path | None) -> str | None:
    """``path``'s repository-relative name (see the module docstring), or None: the
    nearest worktree above it that is ``root`` or shares its git directory names it."""
    if common is not None and path.is_relative_to(common):
        return (Path(".git") / path.relative_to(common)).as_posix()
    for other in (path, *path.parents):
        if other == root:
            return path.relative_to(root).as_posix()
        if (other / ".git").exists() and other != path:
            if common is not None and _common_dir(other) == common:
                return path.relative_to(other).as_posix()
            return None  # another repository (a submodule, a nested clone)
    return None


def _common_dir(top: Path) -> Path | None:
    """The git common directory of the worktree ``top`` (read from the files), or None."""
    dot = top / ".git"
    try:
        if dot.is_dir():
            return dot.resolve()
        text = dot.read_text(encoding="utf-8").splitlines()[0]
        gitdir = (top / text.removeprefix("gitdir:").strip()).resolve()
        pointer = gitdir / "commondir"
        if pointer.is_file():
            return (gitdir / pointer.read_text(encoding="utf-8").strip()).resolve()
        return gitdir
    except (OSError, IndexError, UnicodeDecodeError):
        return None
