"""Reading a real ``detente serve`` child process's first line (``--json``: where it listens)."""

from __future__ import annotations

import queue
import subprocess
import threading

import pytest


def first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """The first line ``proc`` prints on stdout ("" when it exits first); fails the test
    when nothing comes within ``timeout`` seconds (a bound, not a sleep)."""
    lines: queue.Queue[str] = queue.Queue()
    stdout = proc.stdout
    assert stdout is not None
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        pytest.fail(f"detente serve printed nothing within {timeout} s")
