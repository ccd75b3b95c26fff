"""Git objects (blobs, trees, commits) written into a repository without a process each.

A memory commit needs a blob per document, the trees along each document's path and a
commit; spawning ``git hash-object``, ``update-index``, ``write-tree`` and ``commit-tree``
for them cost four processes per commit. :class:`ObjectWriter` writes them as git itself
writes a *loose object* (gitformat-loose(5), "Git Internals - Git Objects" in Pro Git):

- the object is ``<type> SP <size in decimal> NUL <body>``; its name (OID) is the SHA-1
  (or, in a SHA-256 repository, SHA-256) of exactly those bytes;
- it is stored zlib-compressed at ``<objects>/<first 2 hex digits>/<the other 38 (62)>``,
  written to a temporary file in that directory and renamed into place, so a reader sees
  no object or the whole object (its name is its content: an object that is already
  there is left alone). Like git (``core.fsync``'s default leaves loose objects out) it
  does not fsync: a ``kill -9`` loses nothing the page cache holds, and a memory commit
  is only acknowledged after the store's own durable commit recorded its revision;
- compression level 1 (git's ``core.looseCompression`` default).

A repository shared between users (``core.sharedRepository``) needs git's own rules for
the permissions of new object directories; there, and only there, each object is written
by ``git hash-object -w -t <type> --stdin`` instead.

Trees are read with one ``git cat-file --batch`` (:func:`read_objects`) and kept by OID
(an OID names its content forever); :func:`parse_tree` / :func:`format_tree` turn a
tree's body into entries and back, in git's order (names compared bytewise, a tree's
name as if it ended in ``/``).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from detente.vcs.git import Git, GitError

__all__ = [
    "TREE_MODE",
    "ObjectWriter",
    "TreeEntry",
    "commit_body",
    "format_tree",
    "object_id",
    "parse_tree",
    "read_objects",
]

#: Names the temporary files of objects being written (with the process and thread).
_serial = itertools.count()

#: The mode git writes for a subtree entry (no leading zero).
TREE_MODE = "40000"


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a tree: ``mode`` (``100644``, ``100755``, ``120000``, ``160000`` or
    :data:`TREE_MODE`), the entry's ``name`` (one path component, raw bytes) and its OID
    (hex)."""

    mode: str
    name: bytes
    oid: str

    @property
    def is_tree(self) -> bool:
        return self.mode == TREE_MODE


def object_id(kind: str, body: bytes, oid_length: int = 40) -> str:
    """The OID git gives an object of type ``kind`` with ``body`` (SHA-1 when
    ``oid_length`` is 40, SHA-256 when 64)."""
    algo = hashlib.sha256 if oid_length == 64 else hashlib.sha1
    return algo(f"{kind} {len(body)}\0".encode() + body).hexdigest()


def parse_tree(body: bytes, oid_length: int = 40) -> list[TreeEntry]:
    """The entries of a tree object's body (``<mode> SP <name> NUL <raw OID>`` each).

    Raises:
        GitError: ``vcs_error`` when the body is not a well-formed tree.
    """
    raw = oid_length // 2
    entries: list[TreeEntry] = []
    at = 0
    while at < len(body):
        space = body.find(b" ", at)
        nul = body.find(b"\0", space + 1)
        if space < 0 or nul < 0 or nul + 1 + raw > len(body):
            raise GitError("a tree object is malformed", returncode=-1, stderr="", args=())
        mode = body[at:space].decode("ascii")
        entries.append(TreeEntry(mode, body[space + 1 : nul], body[nul + 1 : nul + 1 + raw].hex()))
        at = nul + 1 + raw
    return entries


def _order(entry: TreeEntry) -> bytes:
    return entry.name + b"/" if entry.is_tree else entry.name


def format_tree(entries: Iterable[TreeEntry]) -> bytes:
    """A tree object's body holding ``entries``, in git's order."""
    return b"".join(
        e.mode.encode("ascii") + b" " + e.name + b"\0" + bytes.fromhex(e.oid)
        for e in sorted(entries, key=_order)
    )


def commit_body(
    tree: str,
    parents: Iterable[str],
    message: str,
    identity: tuple[str, str],
    when: float | None = None,
) -> bytes:
    """A commit object's body: ``tree``, ``parents``, author and committer ``identity``
    (name, email) at ``when`` (seconds since the epoch, now by default, with the local
    UTC offset as ``git commit-tree`` writes it), then ``message`` as it is."""
    stamp = int(time.time() if when is None else when)
    offset = time.localtime(stamp).tm_gmtoff // 60
    sign = "-" if offset < 0 else "+"
    zone = f"{sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    name, email = identity
    person = f"{name} <{email}> {stamp} {zone}"
    head = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    head += [f"author {person}", f"committer {person}"]
    return ("\n".join(head) + "\n\n" + message).encode()


def read_objects(git: Git, names: Iterable[str]) -> dict[str, tuple[str, str, bytes] | None]:
    """Objects by name (an OID or any ``<rev>:<path>`` spelling), read in one
    ``git cat-file --batch`` run: ``name -> (oid, type, body)``, None when missing.

    Raises:
        GitError: ``vcs_error`` when git fails.
    """
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return {}
    out = git.run(
        "cat-file", "--batch", input="".join(f"{n}\n" for n in wanted).encode()
    ).stdout_bytes
    found: dict[str, tuple[str, str, bytes] | None] = {}
    at = 0
    for name in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split(b" ")
        at = end + 1
        if len(header) != 3 or header[-1] in (b"missing", b"ambiguous"):
            found[name] = None
            continue
        size = int(header[2])
        found[name] = (header[0].decode("ascii"), header[1].decode("ascii"), out[at : at + size])
        at += size + 1
    return found


class ObjectWriter:
    """Writes loose objects into one repository (see the module docstring).

    Args:
        git: a :class:`Git` of the repository.
        objects: its object directory (``<git common dir>/objects``).
        oid_length: 40 (SHA-1) or 64 (SHA-256).
        by_git: write through ``git hash-object`` (a shared repository).
    """

    def __init__(self, git: Git, objects: Path, oid_length: int = 40, *, by_git: bool) -> None:
        self.git = git
        self.objects = objects
        self.oid_length = oid_length
        self.by_git = by_git

    @classmethod
    def of(cls, git: Git, common_dir: Path, oid_length: int = 40) -> ObjectWriter:
        """The writer of the repository whose common git directory is ``common_dir``
        (one ``git config`` call: is it a shared repository?)."""
        shared = git.run("config", "--get", "core.sharedRepository", check=False)
        value = shared.stdout.strip().lower() if shared.ok else ""
        by_git = value not in ("", "false", "umask", "0", "no", "off")
        return cls(git, common_dir / "objects", oid_length, by_git=by_git)

    def write(self, kind: str, body: bytes) -> str:
        """Store an object of type ``kind`` (``blob``, ``tree``, ``commit``); its OID.

        Raises:
            GitError: ``vcs_error`` when it cannot be written.
        """
        if self.by_git:
            return self.git.text("hash-object", "-w", "-t", kind, "--stdin", input=body)
        data = f"{kind} {len(body)}\0".encode() + body
        algo = hashlib.sha256 if self.oid_length == 64 else hashlib.sha1
        oid = algo(data).hexdigest()
        folder = self.objects / oid[:2]
        target = folder / oid[2:]
        if target.exists():
            with contextlib.suppress(OSError):  # as git does: a recent mtime keeps gc away
                os.utime(target)
            return oid
        try:
            folder.mkdir(exist_ok=True)
            tmp = folder / f"tmp_obj_{os.getpid()}_{threading.get_ident()}_{next(_serial)}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(zlib.compress(data, 1))
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            raise GitError(
                f"cannot write object {oid} into {self.objects}: {exc.strerror or exc}",
                returncode=-1,
                stderr="",
                args=(),
            ) from None
        return oid
