"""``claim complete --test``: the output streams as it runs, with progress and a summary."""

from __future__ import annotations

import json
from pathlib import Path

from cli_harness import Cli, Git

from detente.cli.evidence_tests import run_test, summary

TWO_LINES = "printf 'first line\\nsecond line\\n'"


def _commit(git: Git, claim: dict[str, object]) -> None:
    worktree = Path(str(claim["worktree"]))
    (worktree / "src" / "pkg" / "a.py").write_text("a = 5\n")
    git(worktree, "commit", "-q", "-am", "a five")


def test_complete_prints_each_tests_output_between_progress_lines_and_a_summary(
    cli: Cli, git: Git
) -> None:
    claim = cli.open("src/pkg/a.py", test="unit")["claim"]
    _commit(git, claim)
    result = cli("claim", "complete", claim["id"], "--test", f"unit={TWO_LINES}")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = lines.index(f"[1/1] running unit: {TWO_LINES}")
    assert lines[start + 1 : start + 3] == ["    first line", "    second line"]
    assert lines[start + 3].startswith("[1/1] unit passed (exit 0, ")
    assert lines[start + 4].startswith("tests: 1 passed, 0 failed in ")


def test_under_json_the_test_output_goes_to_stderr_and_stdout_stays_one_document(
    cli: Cli, git: Git
) -> None:
    claim = cli.open("src/pkg/a.py", test="unit")["claim"]
    _commit(git, claim)
    result = cli("claim", "complete", claim["id"], "--test", f"unit={TWO_LINES}", "--json")
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 1
    assert json.loads(result.stdout)["tests"][0]["output"] == "first line\nsecond line\n"
    assert "    first line" in result.stderr and "tests: 1 passed" in result.stderr


def test_a_line_reaches_the_caller_while_the_test_is_still_running(tmp_path: Path) -> None:
    flag = tmp_path / "seen"
    # The command waits (bounded: 20 s) for the caller to have seen its first line.
    command = (
        "echo ready; i=0; "
        f"while [ ! -e {flag} ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done; "
        f"test -e {flag}"
    )

    def echo(line: str) -> None:
        if line == "ready":
            flag.touch()

    record = run_test(command, tmp_path, "wait", echo=echo)
    assert record["status"] == "passed", record


def test_the_summary_names_the_failed_tests() -> None:
    records = [
        {"name": "unit", "status": "passed", "durationSeconds": 1.0},
        {"name": "lint", "status": "failed", "durationSeconds": 0.5},
    ]
    assert summary(records) == "tests: 1 passed, 1 failed (lint) in 1.5 s"
    assert summary([]).startswith("no tests run")


def test_complete_help_explains_name_equals_command(cli: Cli) -> None:
    text = " ".join(cli("claim", "complete", "--help").stdout.split())
    assert "NAME=COMMAND" in text and "test responsibility" in text
