"""Helpers for the end-to-end tests (imported by tests/e2e's conftest and tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: Runs the console script's entry point with this interpreter (no PATH lookup).
DETENTE = [sys.executable, "-c", "from detente.cli.main import main; main()"]


def git(cwd: Path, *args: str) -> str:
    """Plain ``git`` (an oracle independent of detente)."""
    proc = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return proc.stdout.rstrip("\n")
