"""Replacing a file's content atomically (the one helper every file write of detente uses).

:func:`replace_file` writes a temporary file in the target's directory and renames it over
the target (POSIX ``rename(2)`` is atomic within a file system), so a reader sees the old
bytes or the new ones, never a torn file; the target's permission bits are kept.

``fsync`` decides durability across a power failure, not atomicity: with it, the file is
flushed to disk before the rename and its directory after, so the new bytes survive the
machine's crash; without it they survive a ``kill -9`` of the process (the page cache
holds them) but maybe not a power failure. Files whose truth is elsewhere skip it: a
checkout following the integration branch (the branch is the authority), a version kept
as the base of a later merge (the branch's history holds it too).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["replace_file"]


def replace_file(path: Path, data: bytes, *, fsync: bool) -> None:
    """Replace ``path``'s content by ``data`` atomically (see the module docstring),
    creating missing parent directories.

    Raises:
        OSError: the file or its directory cannot be written (nothing was replaced).
    """
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".detente")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
