"""``detente claim objective`` from the command line."""

from __future__ import annotations

from cli_harness import Cli


def test_claim_objective_changes_the_objective_and_refuses_an_unchanged_one(cli: Cli) -> None:
    opened = cli.open("src/app.py", agent="alice")
    claim_id = opened["claim"]["id"]

    code, changed = cli.json("claim", "objective", claim_id, "Retry failed webhook calls")
    assert code == 0
    assert changed["claim"]["objective"] == "Retry failed webhook calls"
    assert changed["claim"]["revision"] == opened["claim"]["revision"] + 1

    same = cli("claim", "objective", claim_id, "Retry failed webhook calls")
    assert same.exit_code == 2
    assert "unchanged" in same.stdout + same.stderr

    text = cli("claim", "objective", claim_id, "Retry webhook calls, with a dead-letter queue")
    assert text.exit_code == 0
    assert "dead-letter" in text.stdout
