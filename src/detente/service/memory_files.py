"""File IO for memory documents: snapshots, ``git merge-file``, safe paths.

- :class:`Snapshots` keeps every version detente wrote or showed, content-addressed by
  SHA-256 under ``<git common dir>/detente/memory/snapshots/``: the base of a later
  three-way merge when an agent names an older ``expectedFileHash``. Written atomically
  (:func:`~detente.vcs.files.replace_file`) without fsync: the integration branch's
  history holds every version too, and a version lost to a power failure (or torn) is
  refused by its digest on read, never used as a base.
- :func:`merge_file` runs ``git merge-file -p`` (git-merge-file(1)) on three versions.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from detente.domain.memory.markdown import digest
from detente.errors import StoreError, ValidationError
from detente.vcs.files import replace_file
from detente.vcs.git import Git

__all__ = ["Snapshots", "inside", "merge_file", "read_bytes"]

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


class Snapshots:
    """Content-addressed copies of file versions (``<root>/<hash[:2]>/<hash>``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, data: bytes) -> str:
        """Keep ``data``; returns its SHA-256 hex digest."""
        key = digest(data)
        path = self.root / key[:2] / key
        if not path.exists():
            try:  # no fsync: the branch's history holds every version too
                replace_file(path, data, fsync=False)
            except OSError as exc:
                raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None
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
