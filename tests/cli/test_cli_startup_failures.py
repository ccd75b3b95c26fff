"""A server that cannot start says why on the last line it prints: ``detente serve``,
``detente demo`` and ``detente mcp`` with a module their start-up needs missing from the
install (a package left out of an install is the usual cause)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Runs the console entry point with one module made unimportable, as an install without it.
_WITHOUT = """
import sys
sys.modules[sys.argv[1]] = None
from detente.cli.main import main
sys.argv = ["detente", *sys.argv[2:]]
main()
"""


def run_without(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT, module, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["demo"]])
def test_a_server_whose_warm_up_cannot_import_a_module_ends_on_that_cause(
    repo: Path, command: list[str]
) -> None:
    extra = ["--repo", str(repo)]
    done = run_without("markdown_it", *command, *extra, cwd=repo)

    assert done.returncode == 1, done.stderr[-2000:]
    line = last_line(done.stderr)
    assert line.startswith("error[startup_failed]: the server did not start: "), line
    assert "ModuleNotFoundError" in line and "markdown_it" in line, line
    assert "cannot join thread" not in done.stderr


def test_the_mcp_server_that_cannot_import_its_sdk_ends_on_that_cause(repo: Path) -> None:
    done = run_without("mcp", "mcp", "--repo", str(repo), cwd=repo)

    assert done.returncode == 1, done.stderr[-2000:]
    line = last_line(done.stderr)
    assert line.startswith("error[startup_failed]: the MCP server did not start: "), line
    assert "mcp" in line


def test_a_demo_that_cannot_start_its_server_answers_one_json_problem_naming_the_cause(
    repo: Path,
) -> None:
    done = run_without("markdown_it", "demo", "--repo", str(repo), "--json", cwd=repo)

    assert done.returncode == 1
    problem = json.loads(done.stdout)
    assert problem["code"] == "startup_failed"
    assert problem["exitCode"] == 1
    assert problem["cause"] == "ModuleNotFoundError"
    assert "markdown_it" in problem["detail"]
