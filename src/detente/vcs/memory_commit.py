"""Memory documents as commits on the integration branch, made with git plumbing only.

A registered memory document has one authoritative copy: the blob at its path in the
tip of the integration branch. detente writes it without a checkout (git-read-tree(1),
git-update-index(1), git-commit-tree(1), git-update-ref(1)):

1. ``read-tree <tip>`` into detente's own index file (``GIT_INDEX_FILE``), never the
   index of any worktree (skipped when that index already holds the tip's tree: the
   tip is detente's own last commit);
2. ``hash-object -w --stdin`` for each new file version;
3. ``update-index --add --cacheinfo <mode>,<blob>,<path>`` for all of them at once;
4. ``write-tree`` and ``commit-tree <tree> -p <tip>`` with the message and its trailers
   (``Detente-Memory: <path> r<revision>``);
5. ``update-ref <branch> <new> <tip>`` (:func:`~detente.vcs.refs.cas_update_ref`): the
   branch moves only if it still names ``tip``; otherwise ``StaleBase`` names where it
   is, and the caller decides again on that commit.

The commit is detente's own (author and committer ``detente``), so a human's commit and
an agent's memory write are told apart by ``git log``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from detente.vcs.blobs import read_blobs
from detente.vcs.git import Git
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

    It keeps one index file of its own (``<git common dir>/detente/memory-index.<pid>``,
    never a worktree's) holding the tree of the last commit it made, so that a write on
    top of its own last commit skips the ``read-tree``.

    Args:
        repo: a directory of the repository (a working tree or a bare one).
    """

    def __init__(self, repo: Path) -> None:
        self.git = Git(repo)
        self._lock = threading.Lock()
        self._index: Path | None = None
        self._index_at: str | None = None

    def _index_path(self) -> Path:
        if self._index is None:
            common = Path(self.git.text("rev-parse", "--git-common-dir"))
            if not common.is_absolute():
                common = self.git.cwd / common
            scratch = common / "detente"
            scratch.mkdir(parents=True, exist_ok=True)
            self._index = scratch / f"memory-index.{os.getpid()}"
            weakref.finalize(self, _remove, self._index)  # no file left behind
        return self._index

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
            VcsError: ``vcs_error`` when git fails otherwise.
        """
        with self._lock:
            git = self.git
            env = {"GIT_INDEX_FILE": str(self._index_path())}
            blobs = {
                path: git.text("hash-object", "-w", "--stdin", input=data)
                for path, data in files.items()
            }
            if self._index_at is None or self._index_at != tip:
                self._index_at = None
                git.run("read-tree", *((tip,) if tip else ("--empty",)), env=env)
            self._index_at = None  # until the tree below is the branch's
            cacheinfo: list[str] = []
            for path, blob in blobs.items():
                mode = (modes or {}).get(path, "100644")
                cacheinfo += ["--cacheinfo", f"{mode},{blob},{path}"]
            git.run("update-index", "--add", *cacheinfo, env=env)
            tree = git.text("write-tree", env=env)
            parents = ("-p", tip) if tip else ()
            new = git.text(
                "commit-tree",
                "--no-gpg-sign",
                tree,
                *parents,
                "-F",
                "-",
                input=message.encode(),
                env=IDENTITY,
            )
            cas_update_ref(git.cwd, ref, new, tip or ZERO_OID, message="detente: memory")
            self._index_at = new
            return new

    def close(self) -> None:
        """Remove the index file."""
        with self._lock:
            if self._index is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._index)
            self._index_at = None


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
