"""``detente agents``: register, heartbeat and list sessions through the client."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_harness import Cli

from detente.clock import FakeClock, parse_time


def test_a_registered_session_is_listed_with_its_intent_and_checkout(cli: Cli) -> None:
    code, body = cli.json("agents", "register", "--name", "codex", "--intent", "fix the parser")
    assert code == 0, body
    agent = body["agent"]
    assert agent["sessionId"].startswith("ses_") and agent["status"] == "active"
    assert agent["branch"] == "main" and Path(agent["worktree"]) == cli.repo.resolve()
    assert body["activeAgents"] == []
    code, listed = cli.json("agents", "list")
    assert code == 0
    assert [(a["sessionId"], a["intent"]) for a in listed["agents"]] == [
        (agent["sessionId"], "fix the parser")
    ]
    text = cli("agents", "list").stdout
    assert agent["sessionId"] in text and "fix the parser" in text


def test_registering_shows_the_other_active_sessions(cli: Cli) -> None:
    cli.json("agents", "register", "--name", "codex", "--session", "ses_a")
    code, body = cli.json("agents", "register", "--name", "claude", "--session", "ses_b")
    assert code == 0
    assert [a["sessionId"] for a in body["activeAgents"]] == ["ses_a"]


def test_a_heartbeat_renews_the_session_and_keeps_its_name_and_intent(
    cli: Cli, clock: FakeClock
) -> None:
    cli.json("agents", "register", "-n", "codex", "-i", "tests", "--session", "ses_x", "--ttl=60")
    clock.advance(45)
    code, body = cli.json("agents", "heartbeat", "ses_x")
    assert code == 0, body
    agent = body["agent"]
    assert (agent["agentName"], agent["intent"], agent["ttlSeconds"]) == ("codex", "tests", 60)
    assert agent["revision"] == 2
    assert (parse_time(agent["expiresAt"]) - clock.now()).total_seconds() == 60


def test_a_departed_session_is_listed_only_with_all_and_a_heartbeat_revives_it(
    cli: Cli, clock: FakeClock
) -> None:
    cli.json("agents", "register", "--name", "codex", "--session", "ses_old", "--ttl", "10")
    clock.advance(11)
    assert cli.json("agents", "list")[1]["agents"] == []
    listed = cli.json("agents", "list", "--all")[1]["agents"]
    assert [(a["sessionId"], a["status"]) for a in listed] == [("ses_old", "departed")]
    code, body = cli.json("agents", "heartbeat", "ses_old")
    assert code == 0 and body["agent"]["status"] == "active"


def test_a_heartbeat_of_a_session_that_never_registered_is_not_found(cli: Cli) -> None:
    code, problem = cli.json("agents", "heartbeat", "ses_nobody")
    assert code == 3 and problem["code"] == "not_found"


def test_a_heartbeat_without_a_session_id_says_how_to_name_one(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DETENTE_SESSION", raising=False)
    code, problem = cli.json("agents", "heartbeat")
    assert code == 2 and "DETENTE_SESSION" in problem["detail"]


def test_a_claim_opened_for_a_registered_session_names_the_sessions_agent(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DETENTE_AGENT", raising=False)
    cli.json("agents", "register", "--name", "agent-a", "--session", "ses_a")
    code, body = cli.json(
        "claim", "open", "-o", "parser", "-p", "src/**", "--session", "ses_a", "--no-worktree"
    )
    assert code == 0, body
    assert body["claim"]["agent"]["name"] == "agent-a"
    assert body["claim"]["agent"]["sessionId"] == "ses_a"
    code, body = cli.json(
        "claim", "open", "-o", "docs", "-p", "docs/**", "--session", "ses_x", "--no-worktree"
    )
    assert code == 0, body  # an unknown session: the usual default name
    assert body["claim"]["agent"]["name"] not in ("agent-a", "")
