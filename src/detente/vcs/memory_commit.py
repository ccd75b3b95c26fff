"""Memory documents as commits on the integration branch, made without a checkout.

A registered memory document has one authoritative copy: the blob at its path in the
tip of the integration branch. detente writes it without a checkout and without an
index:

1. each new file version is a blob, the trees along its path are the tip's trees with
   that entry replaced, and the commit names the new root tree and ``tip`` as parent,
   with the message and its trailers (``Detente-Memory: <path> r<revision>``): all
   written by the dulwich library into the object store (:mod:`detente.vcs.objects`),
   no process; the tip's trees are read through it once and kept, so a write on top of
   the writer's own last commit reads nothing;
2. ``update-ref <branch> <new> <tip>`` (:func:`~detente.vcs.refs.cas_update_ref`,
   git-update-ref(1)): the branch moves only if it still names ``tip``; otherwise
   ``StaleBase`` names where it is, and the caller decides again on that commit. The
   objects of a commit that lost are unreachable and git's gc prunes them.

The commit is detente's own (author and committer ``detente``), so a human's commit and
an agent's memory write are told apart by ``git log``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from detente.vcs.blobs import read_blobs
from detente.vcs.git import Git, GitError
from detente.vcs.objects import TREE_MODE, ObjectStore, TreeEntry, open_objects
from detente.vcs.refs import ZERO_OID, cas_update_ref

__all__ = [
    "IDENTITY",
    "MEMORY_TRAILER",
    "BranchFile",
    "BranchWriter",
    "read_files",
    "tip_of",
]

#: The trailer naming each document version a memory commit records.
MEMORY_TRAILER = "Detente-Memory"

#: The author and committer of detente's own commits.
IDENTITY = {
    "GIT_AUTHOR_NAME": "detente",
    "GIT_AUTHOR_EMAIL": "detente@localhost",
    "GIT_COMMITTER_NAME": "detente",
    "GIT_COMMITTER_EMAIL": "detente@localhost",
}


@dataclass(frozen=True)
class BranchFile:
    """One file of a commit: its blob OID, mode (``100644``) and bytes."""

    blob: str
    mode: str
    data: bytes


def tip_of(repo: Path, ref: str, common_dir: Path | None = None) -> str | None:
    """The commit ``ref`` names now (None: the branch does not exist).

    With the repository's ``common_dir``, a loose ref file is read directly (git replaces
    it by a rename, so it is read whole; a loose ref wins over ``packed-refs``); else,
    or when there is none, ``git rev-parse``.
    """
    if common_dir is not None:
        try:
            text = (common_dir / ref).read_text().strip()
        except OSError:
            text = ""
        if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text):
            return text
    out = Git(repo).run("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False)
    return out.stdout.strip() if out.ok and out.stdout.strip() else None


def read_files(repo: Path, commit: str, paths: Iterable[str]) -> dict[str, BranchFile | None]:
    """The regular files at ``paths`` in ``commit`` (None: absent or not a regular file).

    Two git calls: ``ls-tree`` for the paths, one ``cat-file --batch`` for the blobs.

    Raises:
        GitError: ``vcs_error`` when ``commit`` is not a commit.
    """
    wanted = list(dict.fromkeys(paths))
    found: dict[str, BranchFile | None] = dict.fromkeys(wanted)
    if not wanted:
        return found
    git = Git(repo)
    out = git.run("ls-tree", "-z", "--full-tree", commit, "--", *wanted).stdout_bytes
    entries: dict[str, tuple[str, str]] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw = record.partition(b"\t")
        mode, kind, oid = meta.decode("ascii").split(" ")
        if kind == "blob" and mode in ("100644", "100755"):
            entries[raw.decode("utf-8", "surrogateescape")] = (oid, mode)
    blobs = read_blobs(git, (oid for oid, _ in entries.values()))
    for path, (oid, mode) in entries.items():
        if path in found:
            found[path] = BranchFile(oid, mode, blobs[oid])
    return found


class BranchWriter:
    """Commits memory documents on one repository's integration branch (thread-safe).

    The blobs, the trees along each document's path and the commit are written by the
    repository's :func:`~detente.vcs.objects.open_objects` store (dulwich, in process;
    git's CLI where dulwich cannot); the trees it starts from are read through it and
    kept by OID, so a write on top of its own last commit reads nothing. One process per
    commit: the ``update-ref`` that moves the branch by compare-and-swap (its hooks run).

    Args:
        repo: a directory of the repository (a working tree or a bare one).
    """

    def __init__(self, repo: Path) -> None:
        self.git = Git(repo)
        self._lock = threading.Lock()
        self._objects: ObjectStore | None = None
        #: Tree OID -> its entries; commit OID -> its tree (the commits it made or read).
        self._trees: dict[str, list[TreeEntry]] = {}
        self._roots: dict[str, str] = {}

    def _store(self) -> ObjectStore:
        if self._objects is None:
            self._objects = open_objects(self.git)
        return self._objects

    def _entries(self, objects: ObjectStore, tree: str) -> list[TreeEntry]:
        if tree not in self._trees:
            found = objects.entries(tree)
            if found is None:
                raise GitError(f"tree {tree} is missing", returncode=-1, stderr="", args=())
            self._trees[tree] = found
        return self._trees[tree]

    def _tree(
        self,
        objects: ObjectStore,
        tree: str | None,
        changes: Mapping[tuple[bytes, ...], tuple[str, str]],
        where: str,
    ) -> str:
        """Write the tree ``tree`` (None: an empty one) with ``changes`` (path components
        below it -> ``(mode, blob)``) applied; its OID."""
        entries = {e.name: e for e in self._entries(objects, tree)} if tree else {}
        below: dict[bytes, dict[tuple[bytes, ...], tuple[str, str]]] = {}
        for parts, (mode, blob) in changes.items():
            if len(parts) == 1:
                if entries.get(parts[0]) is not None and entries[parts[0]].is_tree:
                    raise GitError(
                        f"{where}{parts[0].decode(errors='replace')} is a directory on the branch",
                        returncode=-1,
                        stderr="",
                        args=(),
                    )
                entries[parts[0]] = TreeEntry(mode, parts[0], blob)
            else:
                below.setdefault(parts[0], {})[parts[1:]] = (mode, blob)
        for name, inner in below.items():
            old = entries.get(name)
            if old is not None and not old.is_tree:
                raise GitError(
                    f"{where}{name.decode(errors='replace')} is a file on the branch",
                    returncode=-1,
                    stderr="",
                    args=(),
                )
            sub = self._tree(
                objects, old.oid if old else None, inner, f"{where}{name.decode(errors='replace')}/"
            )
            entries[name] = TreeEntry(TREE_MODE, name, sub)
        made = list(entries.values())
        oid = objects.tree(made)
        self._trees[oid] = made
        return oid

    def commit(
        self,
        ref: str,
        tip: str | None,
        files: Mapping[str, bytes],
        message: str,
        *,
        modes: Mapping[str, str] | None = None,
    ) -> str:
        """Commit ``files`` (path -> new bytes) on top of ``tip`` and move ``ref`` by CAS.

        Args:
            ref: the integration branch (``refs/heads/main``).
            tip: the commit the branch must still name (None: the branch must not exist
                yet; the commit is a root commit).
            files: the files to write (repo-relative path -> complete new bytes).
            message: the commit message (its trailers included).
            modes: the mode of a file that exists (``100755`` kept); default ``100644``.

        Returns:
            The new commit's OID (the branch names it now).

        Raises:
            StaleBase: ``stale_base``: the branch moved (``actual`` names where); nothing
                of this commit is reachable.
            VcsError: ``vcs_error`` when git fails otherwise, or a path's directory is a
                file on the branch (or the path a directory).
        """
        with self._lock:
            objects = self._store()
            changes: dict[tuple[bytes, ...], tuple[str, str]] = {}
            for path, data in files.items():
                parts = tuple(os.fsencode(path).split(b"/"))
                mode = (modes or {}).get(path, "100644")
                changes[parts] = (mode, objects.blob(data))
            root: str | None = None
            if tip is not None:
                root = self._roots.get(tip) or objects.tree_of(tip)
                if root is None:
                    raise GitError(f"commit {tip} has no tree", returncode=-1, stderr="", args=())
            tree = self._tree(objects, root, changes, "")
            parents = (tip,) if tip else ()
            identity = (IDENTITY["GIT_AUTHOR_NAME"], IDENTITY["GIT_AUTHOR_EMAIL"])
            new = objects.commit(tree, parents, message, identity)
            cas_update_ref(self.git.cwd, ref, new, tip or ZERO_OID, message="detente: memory")
            if len(self._trees) > _MAX_TREES:  # keep what the next commit starts from
                self._trees = {k: v for k, v in self._trees.items() if k == tree}
                self._roots.clear()
            self._roots[new] = tree
            return new

    def close(self) -> None:
        """Forget the trees it keeps and close the object store."""
        with self._lock:
            self._trees.clear()
            self._roots.clear()
            if self._objects is not None:
                self._objects.close()
                self._objects = None


#: Trees a writer keeps before it forgets all but the last commit's.
_MAX_TREES = 1024
