"""The console entry point: with --json even usage errors are one JSON document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _pythonpath() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": path} if path else {}


def _detente(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from detente.cli.main import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        # PYTHONPATH kept: the child must run the code under test (a worktree's src).
        env={"DETENTE_LOCAL": "1", "PATH": "/usr/bin:/bin", **_pythonpath()},
        timeout=60,
    )


def test_a_usage_error_with_json_is_a_problem_document_on_stdout(tmp_path: Path) -> None:
    done = _detente(tmp_path, "claim", "open", "-o", "x", "-p", "a", "--ttl", "abc", "--json")
    assert done.returncode == 2
    problem = json.loads(done.stdout)
    assert problem["code"] == "validation_error" and "--ttl" in problem["detail"]
    assert problem["exitCode"] == 2


def test_a_command_error_keeps_its_exit_code_through_the_entry_point(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = _detente(tmp_path, "claim", "status", "clm_missing", "--json")
    assert done.returncode == 3
    problem = json.loads(done.stdout)
    assert problem["code"] == "not_found" and problem["exitCode"] == 3 and problem["detail"]
