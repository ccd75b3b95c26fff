"""``claim status --work`` and ``claim list`` pages from the command line (both modes)."""

from __future__ import annotations

import pytest
from cli_harness import Cli


def test_claim_status_reads_git_work_only_with_work(cli: Cli) -> None:
    claim = cli.open("docs/**")["claim"]

    code, plain = cli.json("claim", "status", claim["id"])
    worked_code, worked = cli.json("claim", "status", claim["id"], "--work")

    assert code == 0 and plain["work"] is None
    assert worked_code == 0
    assert worked["work"]["branchHead"] == claim["baseCommit"]
    assert worked["work"]["commitsSinceBase"] == 0


def test_claim_list_pages_with_limit_and_cursor(cli: Cli) -> None:
    opened = [cli.open(f"src/p{i}/**", agent=f"agent{i}")["claim"]["id"] for i in range(3)]

    _, first = cli.json("claim", "list", "--limit", "2")
    _, rest = cli.json("claim", "list", "--limit", "2", "--cursor", first["nextCursor"])
    text = cli("claim", "list", "--limit", "2").stdout

    assert [c["id"] for c in first["claims"]] == opened[:2]
    assert [c["id"] for c in rest["claims"]] == opened[2:]
    assert rest["nextCursor"] is None
    assert f"--cursor {first['nextCursor']}" in text


def test_a_bad_cursor_is_a_validation_error_naming_it(cli: Cli) -> None:
    cli.open("docs/**")

    code, problem = cli.json("claim", "list", "--cursor", "not-a-cursor")

    assert code == 2
    assert problem["code"] == "validation_error" and problem["field"] == "cursor"


def test_claim_list_at_80_columns_prints_each_claims_paths_and_branch_on_their_own_lines(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    claim = cli.open("lib/ansible/plugins/**/*.py", "docs/docsite/rst/**", agent="a")["claim"]

    lines = cli("claim", "list").stdout.splitlines()

    assert "  paths   lib/ansible/plugins/**/*.py, docs/docsite/rst/**" in lines
    assert f"  branch  {claim['branch']}" in lines
    assert all(len(line) <= 80 for line in lines if not line.startswith("  "))


@pytest.mark.parametrize("columns", ["80", "200"])
def test_claim_list_shows_the_modules_symbols_and_contracts_of_claims_holding_only_those(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    cli.open(agent="carol", module="pkg.test")
    cli.open(agent="dave", symbol="f.py::K.a")
    cli.open(agent="erin", contract="billing api")

    text = " ".join(cli("claim", "list").stdout.split())

    assert "module pkg.test" in text
    assert "symbol f.py::K.a" in text
    assert "contract billing api" in text
