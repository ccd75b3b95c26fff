"""File IO for memory documents: atomic writes with undo, snapshots, ``git merge-file``.

- :func:`atomic_write` writes a temporary file in the target's directory, fsyncs it and
  ``os.replace``-s it over the target (POSIX ``rename(2)`` is atomic within a file
  system), so a reader sees the old or the new bytes, never a torn file; the target's
  permission bits are kept.
- :class:`FileJournal` remembers each write of one command and undoes it when the command
  fails before its events commit (only if the file still holds what was written, so a
  concurrent user edit is never clobbered). A crash between the write and the commit
  leaves a file whose hash differs from the recorded one: visible as ``inSync: false``.
- :class:`Snapshots` keeps every version detente wrote or showed, content-addressed by
  SHA-256 under ``<git common dir>/detente/memory/snapshots/``: the base of a later
  three-way merge when an agent names an older ``expectedFileHash``.
- :func:`merge_file` runs ``git merge-file -p`` (git-merge-file(1)) on three versions.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

from detente.domain.memory.markdown import digest
from detente.errors import StoreError, ValidationError
from detente.vcs.git import Git

__all__ = ["FileJournal", "Snapshots", "atomic_write", "inside", "merge_file", "read_bytes"]

_HEX64 = re.compile(r"[0-9a-f]{64}")


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist.

    Raises:
        StoreError: ``store_unavailable`` when it exists but cannot be read.
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path``'s content by ``data`` atomically (see the module docstring).

    Raises:
        StoreError: ``store_unavailable`` when the file cannot be written.
    """
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".detente")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None


class FileJournal:
    """The files one command wrote, with what they held before (see the module docstring)."""

    def __init__(self) -> None:
        self._writes: list[tuple[Path, bytes | None, bytes]] = []

    def write(self, path: Path, data: bytes) -> None:
        """Write ``data`` to ``path`` atomically, remembering the previous content."""
        before = read_bytes(path)
        atomic_write(path, data)
        self._writes.append((path, before, data))

    def rollback(self) -> None:
        """Undo every write whose file still holds what this journal wrote."""
        for path, before, written in reversed(self._writes):
            if read_bytes(path) != written:
                continue
            if before is None:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            else:
                atomic_write(path, before)
        self._writes.clear()


class Snapshots:
    """Content-addressed copies of file versions (``<root>/<hash[:2]>/<hash>``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, data: bytes) -> str:
        """Keep ``data``; returns its SHA-256 hex digest."""
        key = digest(data)
        path = self.root / key[:2] / key
        if not path.exists():
            atomic_write(path, data)
        return key

    def get(self, key: str) -> bytes | None:
        """The version with digest ``key``; None if unknown (or corrupted)."""
        if not _HEX64.fullmatch(key):
            return None
        data = read_bytes(self.root / key[:2] / key)
        return data if data is not None and digest(data) == key else None


def merge_file(ours: bytes, base: bytes, theirs: bytes) -> bytes | None:
    """Three-way merge with ``git merge-file -p``: merged bytes, or None on conflicts.

    Raises:
        VcsError: ``vcs_error`` when git fails for another reason.
    """
    with tempfile.TemporaryDirectory(prefix="detente-merge-") as tmp:
        root = Path(tmp)
        for name, data in (("disk", ours), ("base", base), ("agent", theirs)):
            (root / name).write_bytes(data)
        result = Git(root).run("merge-file", "-p", "disk", "base", "agent", check=False)
    if result.returncode == 0:
        return result.stdout_bytes
    if 0 < result.returncode < 128:
        return None
    raise result.error()


def inside(root: Path, relative: str) -> Path:
    """``root / relative``, refusing a path that leaves ``root`` through a symlink.

    Raises:
        ValidationError: ``validation_error`` (field ``path``).
    """
    target = root / relative
    resolved_root = root.resolve()
    resolved = target.resolve()
    if resolved != resolved_root and resolved_root not in resolved.parents:
        raise ValidationError(
            f"{relative} resolves outside the working tree ({resolved})", field="path"
        )
    return target
