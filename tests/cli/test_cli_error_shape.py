"""Every error under --json is one problem document with the same keys, usage errors too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_harness import Cli


def _detente(cwd: Path, *args: str) -> tuple[int, dict[str, object]]:
    path = os.environ.get("PYTHONPATH")
    env = {"DETENTE_LOCAL": "1", "PATH": "/usr/bin:/bin", **({"PYTHONPATH": path} if path else {})}
    done = subprocess.run(
        [sys.executable, "-c", "from detente.cli.main import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=60,
    )
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["claim", "open", "--json"], "--objective"),  # a missing option
        (["claim", "open", "-o", "x", "--ttl", "abc", "--json"], "--ttl"),  # a wrong type
        (["claim", "list", "--bogus", "--json"], "--bogus"),  # an unknown option
        (["--json", "claim", "status"], "CLAIM_ID"),  # a missing argument
        (["claim", "open", "-o", "x", "-p", "/abs", "--json"], "paths[0]"),  # the service's
    ],
)
def test_a_usage_error_has_the_keys_of_a_validation_error(
    repo: Path, args: list[str], field: str
) -> None:
    code, problem = _detente(repo, *args)
    assert code == 2
    assert set(problem) == {"code", "detail", "field", "exitCode"}
    assert (problem["code"], problem["field"], problem["exitCode"]) == (
        "validation_error",
        field,
        2,
    )


def test_an_error_has_the_same_keys_through_a_server_and_in_process(cli: Cli) -> None:
    code, problem = cli.json("claim", "status", "clm_missing")
    assert code == 3
    assert set(problem) == {"code", "detail", "claimId", "exitCode"}  # no HTTP "status"
    assert problem["exitCode"] == 3 and problem["code"] == "not_found"
