"""The CLI under test, run in-process (imported by tests/cli's conftest and tests)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from detente.cli.main import app

Git = Callable[..., str]


class Cli:
    """Runs ``detente --repo <repo> ARGS`` in-process and decodes ``--json`` output."""

    def __init__(self, repo: Path, mode: str = "local") -> None:
        self.repo = repo
        self.mode = mode  # what ``--json`` reports: "local" (in-process) or "server" (HTTP)
        self.runner = CliRunner()

    def __call__(self, *args: str) -> Any:
        return self.runner.invoke(app, ["--repo", str(self.repo), *args], catch_exceptions=False)

    def json(self, *args: str) -> tuple[int, dict[str, Any]]:
        """Exit code and the JSON document printed on stdout."""
        result = self(*args, "--json")
        return result.exit_code, json.loads(result.stdout)

    def open(self, *paths: str, agent: str = "alice", **options: str) -> dict[str, Any]:
        """``claim open`` on ``paths`` (expects exit 0 or 6); returns the JSON document."""
        args = ["claim", "open", "--objective", f"{agent} edits", "--agent", agent]
        for path in paths:
            args += ["--path", path]
        for key, value in options.items():
            args += [f"--{key.replace('_', '-')}", value]
        code, body = self.json(*args)
        assert code in (0, 6), body
        return body
