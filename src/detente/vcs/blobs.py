"""Reading a commit's tree and blobs straight from the object database.

The index never looks at a working tree: it reads ``git ls-tree`` for a commit and the
blobs with one ``git cat-file --batch`` per batch, so it indexes exactly what was
committed, in any worktree, without checking anything out.
"""

from __future__ import annotations

from collections.abc import Iterable

from detente.vcs.git import Git, GitError

__all__ = ["TreeEntry", "read_blobs", "read_tree", "read_tree_paths"]

TreeEntry = tuple[str, str]
"""``(path, blob OID)`` of one file."""


def read_tree(git: Git, commit: str, *, every_path: bool = False) -> list[TreeEntry]:
    """Every file (blob) of a commit's tree with its blob OID, sorted by path.

    Submodules (gitlinks, mode 160000: the OID is the submodule's commit) and symlinks
    are left out unless ``every_path``: neither holds source to index, but both are
    paths of the tree that claims cover.

    Raises:
        GitError: ``vcs_error`` when ``commit`` does not name a commit.
    """
    every, files = read_tree_paths(git, commit)
    return every if every_path else files


def read_tree_paths(git: Git, commit: str) -> tuple[list[TreeEntry], list[TreeEntry]]:
    """``(every path, the files)`` of a commit's tree (see :func:`read_tree`), from one
    ``git ls-tree``; each sorted by path.

    Raises:
        GitError: ``vcs_error`` when ``commit`` does not name a commit.
    """
    out = git.run("ls-tree", "-r", "-z", "--full-tree", f"{commit}^{{tree}}").stdout_bytes
    every: list[TreeEntry] = []
    files: list[TreeEntry] = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, oid = meta.split(b" ")
        entry = (raw_path.decode("utf-8", "surrogateescape"), oid.decode("ascii"))
        every.append(entry)
        if kind == b"blob" and mode != b"120000":
            files.append(entry)
    every.sort()
    files.sort()
    return every, files


def read_blobs(git: Git, oids: Iterable[str]) -> dict[str, bytes]:
    """The contents of blobs by OID, read in one ``git cat-file --batch`` run.

    Raises:
        GitError: ``vcs_error`` when an OID is missing from the repository.
    """
    wanted = list(dict.fromkeys(oids))
    if not wanted:
        return {}
    out = git.run(
        "cat-file", "--batch", input="".join(f"{o}\n" for o in wanted).encode()
    ).stdout_bytes
    blobs: dict[str, bytes] = {}
    at = 0
    for oid in wanted:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split(b" ")
        if len(header) != 3:
            raise GitError(
                f"blob {oid} is missing from the repository", returncode=-1, stderr="", args=()
            )
        size = int(header[2])
        start = header_end + 1
        blobs[oid] = out[start : start + size]
        at = start + size + 1
    return blobs
