"""Git objects (blobs, trees, commits) written into and read from a repository.

A memory commit needs a blob per document, the trees along each document's path and a
commit. Git's object format is not detente's business: :class:`DulwichObjects` has the
dulwich library (pure-Python git) write them into the repository's object store as
loose objects, in process, and read trees back (from loose objects or packs). dulwich
honours the repository's object format (SHA-1 or SHA-256), ``core.sharedRepository``
permissions and ``core.looseCompression``; like git by default it does not fsync loose
objects: a memory commit is acknowledged only after the store's own durable commit
recorded its revision.

A repository dulwich cannot open (an extension it does not know, such as
``preciousObjects``), or whose object format it reads differently from git, gets
:class:`GitObjects` instead: the same objects through the git CLI (``hash-object -w``,
``mktree``, ``commit-tree``, ``ls-tree``), one process each. :func:`open_objects`
chooses. dulwich is imported here only, lazily, so the CLI and the hooks never load it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from detente.vcs.git import Git, GitError

if TYPE_CHECKING:
    from dulwich.objects import ShaFile
    from dulwich.repo import Repo

__all__ = [
    "TREE_MODE",
    "DulwichObjects",
    "GitObjects",
    "ObjectStore",
    "TreeEntry",
    "open_objects",
]

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


def _person(identity: tuple[str, str]) -> str:
    name, email = identity
    return f"{name} <{email}>"


def _stamp(when: float | None) -> tuple[int, int]:
    """Seconds since the epoch and the local UTC offset in seconds (as ``commit-tree``)."""
    stamp = int(time.time() if when is None else when)
    return stamp, time.localtime(stamp).tm_gmtoff


class ObjectStore(Protocol):
    """Writes and reads the objects of one repository (OIDs in hex)."""

    oid_length: int

    def blob(self, data: bytes) -> str: ...

    def tree(self, entries: list[TreeEntry]) -> str: ...

    def commit(
        self, tree: str, parents: tuple[str, ...], message: str, identity: tuple[str, str]
    ) -> str: ...

    def tree_of(self, commit: str) -> str | None: ...

    def entries(self, tree: str) -> list[TreeEntry] | None: ...

    def close(self) -> None: ...


class DulwichObjects:
    """Objects written and read by dulwich (``Repo.object_store``); no process, except
    for an object whose ``.lock`` file is there (dulwich writes an object through
    ``<object>.lock``; one left by a process killed while writing would refuse that
    object forever): ``git hash-object -w``, which writes under a name of its own."""

    def __init__(self, repo: Repo, git: Git) -> None:
        self.repo = repo
        self.git = git
        self.store = repo.object_store
        self.oid_length = repo.object_format.hex_length

    def blob(self, data: bytes) -> str:
        from dulwich.objects import Blob

        return self._add(Blob.from_string(data))

    def tree(self, entries: list[TreeEntry]) -> str:
        from dulwich.objects import ObjectID, Tree

        obj = Tree()
        for e in entries:
            obj.add(e.name, int(e.mode, 8), ObjectID(e.oid.encode("ascii")))
        return self._add(obj)

    def commit(
        self, tree: str, parents: tuple[str, ...], message: str, identity: tuple[str, str]
    ) -> str:
        from dulwich.objects import Commit, ObjectID

        stamp, offset = _stamp(None)
        obj = Commit()
        obj.tree = ObjectID(tree.encode("ascii"))
        obj.parents = [ObjectID(p.encode("ascii")) for p in parents]
        obj.author = obj.committer = _person(identity).encode()
        obj.author_time = obj.commit_time = stamp
        obj.author_timezone = obj.commit_timezone = offset
        obj.message = message.encode()
        return self._add(obj)

    def _add(self, obj: ShaFile) -> str:
        from dulwich.file import FileLocked

        try:
            self.store.add_object(obj)
        except FileLocked:
            # ``<object>.lock`` is there: another process writing the same object, or one
            # killed while it did (the lock then stays). git writes under a name of its
            # own, so the object is written by git; never waiting on a stale lock.
            kind = obj.type_name.decode("ascii")
            body = obj.as_raw_string()
            return self.git.text("hash-object", "-w", "-t", kind, "--stdin", input=body)
        except OSError as exc:
            raise GitError(
                f"cannot write an object into {self.store.path}: {exc.strerror or exc}",
                returncode=-1,
                stderr="",
                args=(),
            ) from None
        return obj.get_id(self.repo.object_format).decode("ascii")

    def _read(self, oid: str) -> ShaFile | None:
        from dulwich.objects import ObjectID

        try:
            return self.store[ObjectID(oid.encode("ascii"))]
        except KeyError:
            return None

    def tree_of(self, commit: str) -> str | None:
        from dulwich.objects import Commit

        found = self._read(commit)
        return found.tree.decode("ascii") if isinstance(found, Commit) else None

    def entries(self, tree: str) -> list[TreeEntry] | None:
        from dulwich.objects import Tree

        found = self._read(tree)
        if not isinstance(found, Tree):
            return None
        return [TreeEntry(f"{e.mode:o}", e.path, e.sha.decode("ascii")) for e in found.iteritems()]

    def close(self) -> None:
        self.repo.close()


class GitObjects:
    """The same objects through the git CLI (a process each): the fallback."""

    def __init__(self, git: Git, oid_length: int) -> None:
        self.git = git
        self.oid_length = oid_length

    def blob(self, data: bytes) -> str:
        return self.git.text("hash-object", "-w", "--stdin", input=data)

    def tree(self, entries: list[TreeEntry]) -> str:
        lines = b"".join(
            e.mode.encode("ascii")
            + (b" tree " if e.is_tree else b" blob ")
            + e.oid.encode("ascii")
            + b"\t"
            + e.name
            + b"\0"
            for e in entries
        )
        return self.git.text("mktree", "-z", input=lines)

    def commit(
        self, tree: str, parents: tuple[str, ...], message: str, identity: tuple[str, str]
    ) -> str:
        name, email = identity
        env = {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
        }
        args = [a for p in parents for a in ("-p", p)]
        return self.git.text("commit-tree", tree, *args, "-F", "-", input=message.encode(), env=env)

    def tree_of(self, commit: str) -> str | None:
        out = self.git.run("rev-parse", "--verify", "-q", f"{commit}^{{tree}}", check=False)
        return out.stdout.strip() if out.ok and out.stdout.strip() else None

    def entries(self, tree: str) -> list[TreeEntry] | None:
        out = self.git.run("ls-tree", "-z", tree, check=False)
        if not out.ok:
            return None
        found: list[TreeEntry] = []
        for record in out.stdout_bytes.split(b"\0"):
            if record:
                meta, _, name = record.partition(b"\t")
                mode, _, oid = meta.decode("ascii").split(" ")
                found.append(TreeEntry(f"{int(mode, 8):o}", name, oid))  # "040000" -> "40000"
        return found

    def close(self) -> None:
        return None


def open_objects(git: Git) -> ObjectStore:
    """The object store of ``git``'s repository: dulwich's, or git's CLI when dulwich
    cannot open the repository or reads its object format differently (two ``git
    rev-parse`` calls, once).

    Raises:
        GitError: ``vcs_error`` when git cannot name the repository.
    """
    common = Path(git.text("rev-parse", "--git-common-dir"))
    if not common.is_absolute():
        common = git.cwd / common
    found = git.run("rev-parse", "--show-object-format", check=False)
    fmt = found.stdout.strip() if found.ok and found.stdout.strip() else "sha1"
    oid_length = 64 if fmt == "sha256" else 40
    from dulwich.repo import Repo

    try:
        repo = Repo(str(common))
    except Exception:  # an extension dulwich does not know, or a layout it cannot read
        return GitObjects(git, oid_length)
    if repo.object_format.name != fmt:
        repo.close()
        return GitObjects(git, oid_length)
    return DulwichObjects(repo, git)
