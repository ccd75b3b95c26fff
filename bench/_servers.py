"""What several benches set up alike: a scratch git repository and a server subprocess.

``python bench/<name>.py`` puts ``bench/`` on ``sys.path``, so a bench imports this as
``_servers``. The port wait is the tests' own (``tests/storage/servers.py``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from storage.servers import _wait_for_port, free_port

__all__ = ["make_repo", "spawn_server"]


def make_repo(root: Path) -> Path:
    """``root/repo``: a new git repository on ``main`` with one empty commit."""
    repo = root / "repo"
    repo.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty", "-m", "i"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def spawn_server(
    argv: Sequence[str], what: str, **popen: Any
) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``argv`` followed by a free loopback port and wait until it listens there.

    Args:
        argv: the server's command line, but its last argument: the port.
        what: the server's name in a start-up error.
        popen: more ``subprocess.Popen`` arguments (``cwd``, ``env``, ``stdout``...).

    Returns:
        The running process (the caller stops it) and its port.

    Raises:
        RuntimeError: it exited or did not listen in time (it is killed first).
    """
    port = free_port()
    proc: subprocess.Popen[bytes] = subprocess.Popen([*argv, str(port)], **popen)
    try:
        _wait_for_port(port, proc, what)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc, port
