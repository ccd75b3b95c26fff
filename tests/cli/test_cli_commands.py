"""Global behaviour of the CLI: help, start-up cost, serve's refusal, audit, events, expiry."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_harness import Cli

from detente.clock import FakeClock


def test_help_documents_every_command_group_and_the_exit_codes(cli: Cli) -> None:
    result = cli("--help")
    text = " ".join(result.stdout.split())

    assert result.exit_code == 0
    for command in ("serve", "claim", "events", "audit", "demo"):
        assert f" {command} " in text
    assert "Exit codes" in text
    assert "6 overlap (claim opened but negotiating)" in text
    assert "9 server or store unavailable" in text


def test_importing_the_cli_loads_no_server_http_or_rich_modules() -> None:
    heavy = ("fastapi", "uvicorn", "pydantic", "starlette", "httpx", "rich", "sqlite3")
    code = (
        "import sys, detente.cli.main; "
        f"print([m for m in sys.modules if m.split('.')[0] in {heavy!r}])"
    )

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert out.stdout.strip() == "[]"


def test_serve_refuses_a_non_loopback_host_with_exit_2(cli: Cli) -> None:
    result = cli("serve", "--host", "0.0.0.0", "--port", "0")

    assert result.exit_code == 2
    assert "without authentication" in result.stderr


def test_serve_refuses_a_non_loopback_host_in_json_too(cli: Cli) -> None:
    code, body = cli.json("serve", "--host", "192.168.1.10")

    assert code == 2
    assert body["field"] == "host"


def test_audit_verify_exits_0_after_claims_were_opened_and_renewed(cli: Cli) -> None:
    claim = cli.open("src/**")["claim"]
    cli.json("claim", "renew", claim["id"])

    code, body = cli.json("audit", "verify")
    text = cli("audit", "verify")

    assert code == 0
    assert body["ok"] is True
    assert body["events"] == 2  # announced, activated: the renewal moved a lease row
    assert text.exit_code == 0
    assert "audit ok" in text.stdout
    cli.open("docs/**", agent="bob")
    assert cli.json("audit", "verify")[1]["events"] == 2  # only what is new
    assert cli.json("audit", "verify", "--full")[1]["events"] == 4


def test_events_watch_in_local_mode_prints_the_log_from_since_and_stops_after_count(
    cli: Cli,
) -> None:
    first = cli.open("src/**", agent="claude-code")["claim"]
    cli.open("src/pkg/a.py", agent="codex")

    result = cli("events", "watch", "--since", "0", "--count", "3", "--json")
    lines = [json.loads(line) for line in result.stdout.splitlines()]

    assert result.exit_code == 0
    assert [e["seq"] for e in lines] == [1, 2, 3]
    assert [e["type"] for e in lines[:2]] == ["claim.announced", "claim.activated"]
    assert lines[0]["subject"] == f"claim/{first['id']}"


def test_events_watch_text_prints_one_line_per_event(cli: Cli) -> None:
    claim = cli.open("src/**")["claim"]

    result = cli("events", "watch", "--since", "1", "--count", "1")

    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        line for line in result.stdout.splitlines() if line.startswith("#2 ")
    ]
    assert f"claim.activated claim/{claim['id']} active" in result.stdout


def test_renewing_after_the_deadline_exits_5_and_the_claim_is_expired(
    cli: Cli, clock: FakeClock
) -> None:
    claim = cli.open("src/**", ttl="30")["claim"]
    clock.advance(31)

    code, body = cli.json("claim", "renew", claim["id"])

    assert code == 5
    assert body["code"] == "lease_expired"
    assert cli.json("claim", "status", claim["id"])[1]["claim"]["status"] == "expired"


def test_local_mode_outside_a_repository_exits_2(tmp_path: Path) -> None:
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()

    code, body = Cli(elsewhere).json("claim", "list")

    assert code == 2
    assert body["code"] == "validation_error"


def test_naming_both_a_server_and_local_mode_is_a_usage_error(cli: Cli) -> None:
    result = cli("--server", "http://127.0.0.1:9", "--local", "claim", "list")

    assert result.exit_code == 2
    assert "either a server" in result.stderr


def test_every_error_code_of_the_hierarchy_has_its_exit_code() -> None:
    from detente import errors
    from detente.cli.render import exit_code_for

    pending, codes = [errors.DetenteError], set()
    while pending:
        cls = pending.pop()
        codes.add(cls.code)
        pending.extend(cls.__subclasses__())
    # Only a bug ("error", "internal_error"), an unmodelled git failure and a process that
    # could not start (its cause is in the detail) are "unexpected".
    unexpected = {c for c in codes if exit_code_for(c) == 1}

    assert unexpected <= {"error", "internal_error", "vcs_error", "demo_failed", "startup_failed"}
    assert exit_code_for("overlap_blocking") == 6
    assert exit_code_for("server_unavailable") == 9


def test_an_explicit_local_flag_overrides_detente_url_from_the_environment(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DETENTE_LOCAL")
    monkeypatch.setenv("DETENTE_URL", "http://127.0.0.1:1")  # nothing listens there
    for args in (["--local", "claim", "list", "--json"], ["claim", "list", "--json", "--local"]):
        result = Cli(repo)(*args)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["mode"] == "local"
    both = Cli(repo)("--server", "http://127.0.0.1:1", "--local", "claim", "list", "--json")
    assert both.exit_code == 2
    assert json.loads(both.stdout)["code"] == "validation_error"
