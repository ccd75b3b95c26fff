"""Checkouts of the integration branch follow detente's memory commits (``updateInstead``).

After a memory commit moved the branch, every worktree that has the branch checked out
(the repository's own included, :func:`~detente.vcs.checkout.checkouts_of`) is brought
along, document by document, with git's ``receive.denyCurrentBranch=updateInstead``
rule narrowed to the files the commit changed: a document is updated there only when
the checkout's index entry *and* its file both hold the old tip's version (or the file
already holds the new one; an untracked file holding the old version counts as clean).
The file is replaced atomically and its index entry refreshed (``git update-index
--add``); when the commit changed nothing else, one two-tree ``git read-tree -u -m``
does the same for the whole checkout first. Anything else (a human's edit in the file, a
staged change) is left exactly as it is, and the copy is reported:

- ``current``: the file holds the branch's version;
- ``behind``: the file is clean (equals its index entry) but older than the branch;
- ``edited``: the file differs from its index entry: someone edited it there.

Blob ids are computed as git does (``sha1("blob <size>\\0" + bytes)``, or SHA-256 in a
SHA-256 repository), so a clean, current checkout costs no git process to recognise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from detente.vcs.checkout import checkouts_of
from detente.vcs.files import replace_file
from detente.vcs.git import Git

__all__ = [
    "CheckoutCopy",
    "blob_id",
    "branch_checkouts",
    "checkout_copies",
    "follow_checkouts",
]

CopyState = Literal["current", "behind", "edited"]


@dataclass(frozen=True)
class CheckoutCopy:
    """A document's copy in one checkout of the integration branch.

    Attributes:
        worktree: the checkout.
        path: the document's repo-relative path.
        state: ``current``, ``behind`` or ``edited`` (see the module docstring).
        data: the file's bytes there (None: no file).
        index_blob: the blob its index entry names (None: no entry).
    """

    worktree: Path
    path: str
    state: CopyState
    data: bytes | None
    index_blob: str | None


def blob_id(data: bytes, oid_length: int = 40) -> str:
    """The blob OID git gives ``data`` (SHA-1, or SHA-256 when ``oid_length`` is 64)."""
    header = f"blob {len(data)}\0".encode()
    algo = hashlib.sha256 if oid_length == 64 else hashlib.sha1
    return algo(header + data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _index_entries(worktree: Path, paths: Iterable[str]) -> dict[str, str]:
    out = Git(worktree).run("ls-files", "-s", "-z", "--", *paths, check=False)
    found: dict[str, str] = {}
    for record in out.stdout.split("\0") if out.ok else ():
        meta, _, path = record.partition("\t")
        fields = meta.split(" ")
        if len(fields) == 3 and fields[2] == "0":
            found[path] = fields[1]
    return found


def branch_checkouts(repo: Path, ref: str) -> list[Path]:
    """:func:`checkouts_of`, plus the repository's own working tree when its ``HEAD`` is
    ``ref`` but nothing was ever added to its index (a new repository whose first commit
    detente made: its files are there, untracked)."""
    found = checkouts_of(repo, ref)
    dot = repo / ".git"
    if repo not in found and dot.is_dir():
        try:
            head = (dot / "HEAD").read_text().strip()
        except OSError:
            head = ""
        if head == f"ref: {ref}" and not (dot / "index").exists():
            found.insert(0, repo)
    return found


def checkout_copies(
    repo: Path,
    ref: str,
    tip_blobs: Mapping[str, str | None],
    oid_length: int = 40,
    *,
    following: Collection[str] = (),
) -> list[CheckoutCopy]:
    """Each document's copy in each checkout of ``ref`` (see the module docstring).

    Args:
        repo: a directory of the repository.
        ref: the integration branch.
        tip_blobs: path -> the blob the branch's tip holds (None: absent).
        oid_length: 40 (SHA-1) or 64 (SHA-256).
        following: blobs of the branch's recent versions that checkouts are still being
            brought to (queued follows): a file holding one is ``behind`` without its
            index being asked (its ``index_blob`` is then that blob).

    Returns:
        One copy per (checkout, path), checkouts in :func:`checkouts_of` order.
    """
    out: list[CheckoutCopy] = []
    for worktree in branch_checkouts(repo, ref):
        index: dict[str, str] | None = None
        for path, tip in tip_blobs.items():
            data = _read(worktree / path)
            have = blob_id(data, oid_length) if data is not None else None
            if have is not None and have != tip and have in following:
                out.append(CheckoutCopy(worktree, path, "behind", data, have))
                continue
            if index is None and have != tip:
                index = _index_entries(worktree, tip_blobs)
            entry = (index or {}).get(path) if have != tip else tip
            state: CopyState = "current" if have == tip else "behind" if have == entry else "edited"
            out.append(CheckoutCopy(worktree, path, state, data, entry))
    return out


def follow_checkouts(
    repo: Path,
    ref: str,
    old_blobs: Mapping[str, str | None],
    new_files: Mapping[str, bytes],
    oid_length: int = 40,
    commits: tuple[str, str] | None = None,
) -> list[CheckoutCopy]:
    """Bring each checkout of ``ref`` from the old versions to ``new_files`` where clean.

    Args:
        repo: a directory of the repository.
        ref: the integration branch (it names the new commit already).
        old_blobs: path -> the blob the previous tip held (None: absent).
        new_files: path -> the bytes the new tip holds.
        oid_length: 40 (SHA-1) or 64 (SHA-256).
        commits: ``(old tip, new tip)`` when the new tip changes only ``new_files``:
            a checkout is first brought along by one two-tree ``git read-tree -u -m``
            (git-read-tree(1): it refuses a path whose index or file is not the old
            version, and then nothing changes); the file-by-file rule runs where it
            refused.

    Returns:
        The copies left as they were (``behind`` or ``edited``); empty when every
        checkout followed. Never raises for a checkout it cannot update: it reports it.
    """
    left: list[CheckoutCopy] = []
    for worktree in branch_checkouts(repo, ref):
        if commits is not None and (worktree / ".git").exists():
            moved = Git(worktree).run("read-tree", "-u", "-m", *commits, check=False)
            if moved.ok:
                continue
        index = _index_entries(worktree, new_files)
        refresh: list[str] = []
        for path, data in new_files.items():
            new_blob = blob_id(data, oid_length)
            target = worktree / path
            now = _read(target)
            have = blob_id(now, oid_length) if now is not None else None
            entry = index.get(path)
            if have == new_blob:
                if entry != new_blob:
                    refresh.append(path)
                continue
            old = old_blobs.get(path)
            # Clean: index and file at the old version (an untracked file holding exactly
            # the old version is nobody's edit either).
            if have == old and entry in (old, None):
                try:
                    replace_file(target, data, fsync=False)  # the branch has it
                except OSError:
                    left.append(CheckoutCopy(worktree, path, "behind", now, entry))
                    continue
                refresh.append(path)
                continue
            state: CopyState = "behind" if have == entry else "edited"
            left.append(CheckoutCopy(worktree, path, state, now, entry))
        if refresh:
            result = Git(worktree).run("update-index", "--add", "--", *refresh, check=False)
            if not result.ok:
                left += [CheckoutCopy(worktree, p, "behind", None, None) for p in refresh]
    return left
