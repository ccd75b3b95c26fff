"""A worktree's ``HEAD`` commit read from git's files, without a git process.

``GET /v1/repos`` names each served repository's head, and every harness hook call in
server mode asks it (to learn the repository's name on the server): a ``git rev-parse``
per call. :func:`read_head` reads what git's *files* ref backend keeps (gitrepository-layout(5),
gitglossary "ref"): the worktree's ``HEAD`` (a ``.git`` file in a linked worktree names
its directory), the branch it names as a loose ref under the common directory, else
its line in ``packed-refs``. Anything else (the reftable backend, a symbolic ref to a
symbolic ref, an unborn branch, a file it cannot read) answers None, and the caller asks
git (:func:`detente.vcs.repo.current_oid`).
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["read_head"]

_OID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
#: A branch ref a ``HEAD`` may name (never ``..``: nothing outside the refs is read).
_REF = re.compile(r"refs/heads/[A-Za-z0-9._/+@-]+")


def read_head(top: Path) -> str | None:
    """The commit ``HEAD`` of the worktree at ``top`` points to, or None when the files
    do not say it plainly (see the module docstring: then ask git).

    Args:
        top: the worktree's top directory (the one holding ``.git``).
    """
    try:
        gitdir = _gitdir(top)
        if gitdir is None:
            return None
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
        if _OID.fullmatch(head):
            return head  # detached
        ref = head.removeprefix("ref: ")
        if ref == head or not _REF.fullmatch(ref) or ".." in ref or ref.endswith(".invalid"):
            return None
        common = gitdir
        pointer = gitdir / "commondir"
        if pointer.is_file():
            common = (gitdir / pointer.read_text(encoding="utf-8").strip()).resolve()
        loose = common / ref
        if loose.is_file():
            oid = loose.read_text(encoding="utf-8").strip()
            return oid if _OID.fullmatch(oid) else None
        return _packed(common / "packed-refs", ref)
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _gitdir(top: Path) -> Path | None:
    dot = top / ".git"
    if dot.is_dir():
        return dot
    if not dot.is_file():
        return None
    line = dot.read_text(encoding="utf-8").strip()
    if not line.startswith("gitdir: "):
        return None
    named = Path(line.removeprefix("gitdir: "))
    return named if named.is_absolute() else (top / named).resolve()


def _packed(path: Path, ref: str) -> str | None:
    if not path.is_file():
        return None
    for line in path.read_text(encoding="utf-8").splitlines():
        oid, _, name = line.partition(" ")
        if name == ref and _OID.fullmatch(oid):
            return oid
    return None
