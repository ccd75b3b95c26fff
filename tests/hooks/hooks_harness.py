"""Helpers of the hook tests: real git commands, the in-process CLI, the fixtures' types."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from detente.cli.main import app
from detente.service import Service


def run_git(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``git <args>`` as a user runs it (bounded: a hung hook fails the test)."""
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=120,
    )


def git(cwd: Path, *args: str) -> str:
    proc = run_git(cwd, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.rstrip("\n")


def commit(work: Path, rel: str, text: str, *trailers: str) -> str:
    """Write ``rel``, commit everything with ``trailers``; the new HEAD."""
    path = work / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    message = ["-m", f"change {rel}"] + [arg for t in trailers for arg in ("-m", t)]
    git(work, "add", "-A")
    git(work, "commit", "-q", *message)
    return git(work, "rev-parse", "HEAD")


def detente(*args: str, code: int = 0) -> dict[str, Any]:
    """``detente <args> --json``, in process; the decoded output."""
    result = CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == code, result.output
    body: dict[str, Any] = json.loads(result.stdout)
    return body


@dataclass
class Shared:
    """The shared bare repository, a clone to work in, and ``main``'s first commit."""

    bare: Path
    work: Path
    m0: str


@dataclass
class Server:
    """A running detente server; ``checks`` lists the refs it checked, in order."""

    url: str
    service: Service
    checks: list[str] = field(default_factory=list)
