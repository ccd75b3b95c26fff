"""A waiting agent is woken at its next hook call: when the claim it waits behind is
released, its next edit is allowed and told its turn came, a stop hook tells it to go
on, and detente records the ``delivered`` and ``seen`` receipts on its session (in local
mode, on a real repository and store, with the commands ``detente init`` wrote)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from detente.cli.main import app
from detente.client.connect import open_local
from detente.client.seeds import claim_seed

from harness_support import call, decision, fixture, hook_env, written_commands


class Waiting:
    """``src/held.py`` held by bob's claim; the Claude Code session S1's claim on it
    waits in a meeting room."""

    def __init__(self, tmp: Path) -> None:
        self.top = tmp / "project"
        (self.top / "src").mkdir(parents=True)
        for args in (["init", "-q", "-b", "main"], ["config", "user.name", "T"]):
            subprocess.run(["git", *args], cwd=self.top, check=True)
        subprocess.run(["git", "config", "user.email", "t@t.invalid"], cwd=self.top, check=True)
        (self.top / "src" / "held.py").write_text("def held():\n    return 1\n")
        subprocess.run(["git", "add", "-A"], cwd=self.top, check=True)
        subprocess.run(["git", "commit", "-qm", "src"], cwd=self.top, check=True)
        done = CliRunner().invoke(app, ["--repo", str(self.top), "init", "--json"])
        assert done.exit_code == 0, done.output
        self.commands = written_commands(self.top, "claude")
        self.env = hook_env(tmp, DETENTE_LOCAL="1")
        self.theirs = self._open("bob", None)["claim"]
        waiting = self._open("alice", "claude-S1")
        assert waiting["claim"]["status"] == "negotiating"
        self.mine = waiting["claim"]["id"]

    def _open(self, agent: str, session: str | None) -> dict[str, Any]:
        with open_local(self.top) as client:
            seed = claim_seed(
                repo=client.repo_name or "",
                objective=f"{agent} reworks src/held.py",
                agent=agent,
                session=session,
                base_commit="HEAD",
                paths=["src/held.py"],
                ttl=3600,
            )
            return dict(client.open_claim(seed))

    def release_the_holder(self) -> None:
        with open_local(self.top) as client:
            client.abandon(self.theirs["id"], expected_claim_revision=self.theirs["revision"])

    def edit(self) -> tuple[str, str]:
        event, payload = fixture(
            "claude",
            "edit",
            SESSION="S1",
            WORKTREE=str(self.top),
            FILE=str(self.top / "src" / "held.py"),
            OLD="return 1",
            NEW="return 2",
        )
        code, out, err = call(self.commands[event], payload, self.top, self.env)
        assert "Traceback" not in err
        return decision("claude", code, out)

    def stop(self) -> dict[str, Any]:
        event, payload = fixture("claude", "stop", SESSION="S1", WORKTREE=str(self.top))
        code, out, _ = call(self.commands[event], payload, self.top, self.env)
        assert code == 0
        return json.loads(out) if out.strip() else {}

    def receipts(self) -> dict[str, int]:
        with open_local(self.top) as client:
            return dict(client.get_agent("claude-S1")["agent"]["notices"])


def test_a_waiters_next_edit_is_allowed_and_told_its_turn_came_with_receipts(
    tmp_path: Path,
) -> None:
    repo = Waiting(tmp_path)
    before = repo.edit()  # registers the session: its notices start here
    repo.release_the_holder()

    allowed, said = repo.edit()
    delivered = repo.receipts()
    repo.edit()
    seen = repo.receipts()
    status = CliRunner().invoke(
        app, ["--repo", str(repo.top), "--local", "claim", "status", repo.mine], env=repo.env
    )

    assert before[0] == "deny"
    assert allowed == "allow"
    assert f"your claim {repo.mine} is active now" in said and "you may proceed" in said
    assert delivered["deliveredUpTo"] > delivered["seenUpTo"]
    assert seen["seenUpTo"] == seen["deliveredUpTo"] == delivered["deliveredUpTo"]
    up_to = seen["seenUpTo"]
    assert status.exit_code == 0, status.output
    assert (
        f"notices of session claude-S1: delivered up to #{up_to}, seen up to #{up_to}"
        in status.output
    )


def test_a_waiter_that_stops_is_told_to_go_on_once_when_its_turn_came(tmp_path: Path) -> None:
    repo = Waiting(tmp_path)
    repo.edit()
    waiting = repo.stop()
    repo.release_the_holder()

    woken = repo.stop()
    again = repo.stop()

    assert waiting.get("decision") != "block"
    assert (
        woken["decision"] == "block" and f"your claim {repo.mine} is active now" in woken["reason"]
    )
    assert again.get("decision") != "block"  # delivered once: it does not loop
    assert repo.receipts()["deliveredUpTo"] > 0


def test_a_session_waiting_in_line_for_a_shared_resource_is_told_at_stop_when_its_slot_came(
    tmp_path: Path,
) -> None:
    repo = Waiting(tmp_path)
    repo.edit()  # registers the session: its notices start here
    with open_local(repo.top) as client:
        held = client.acquire_resource("build", {"ttlSeconds": 600})["grant"]
        queued = client.acquire_resource(
            "build", {"ttlSeconds": 600, "wait": True, "sessionId": "claude-S1"}
        )
    waiting = repo.stop()
    with open_local(repo.top) as client:
        client.release_resource("build", {"fencingToken": held["fencingToken"]})

    woken = repo.stop()
    again = repo.stop()

    assert held is not None and queued["grant"] is None and queued["waiting"] is not None
    assert waiting.get("decision") != "block"  # in line: nothing to go on with yet
    assert woken["decision"] == "block"
    assert "your turn came for resource build" in woken["reason"]
    assert re.search(r"lease until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)", woken["reason"])
    assert again.get("decision") != "block"  # delivered once
