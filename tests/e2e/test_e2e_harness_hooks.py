"""Two harness sessions in two worktrees of one repository, a real server, real git and
the hooks ``detente init`` wrote: a Claude Code session and a Codex session claim
overlapping files; the Codex session's patch is refused before it is applied, the room
the overlap opened is settled by a split, and the retried patch is allowed."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from e2e_harness import DETENTE

from detente.client.connect import connect
from detente.client.seeds import claim_seed

from harness_support import call, decision, fixture, hook_env, written_commands


@pytest.fixture
def server(repo: Path) -> Iterator[str]:
    """``detente serve --port 0`` on ``repo``; yields its URL."""
    proc = subprocess.Popen(
        [*DETENTE, "--repo", str(repo), "serve", "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "no output"
        url = str(json.loads(line)["listening"])
        assert httpx.get(f"{url}/healthz", timeout=20).json()["ok"] is True
        yield url
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _patch(rel: str) -> str:
    return (
        f"*** Begin Patch\n*** Update File: {rel}\n@@\n-def f():\n+def f():  # codex\n"
        "*** End Patch\n"
    )


def test_the_second_session_is_denied_before_the_edit_until_a_split_settles_the_room(
    repo: Path, server: str, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from detente.cli.main import app

    assert CliRunner().invoke(app, ["--repo", str(repo), "init"]).exit_code == 0
    claude, codex = written_commands(repo, "claude"), written_commands(repo, "codex")
    env = hook_env(tmp_path, DETENTE_URL=server)
    with connect(server, repo) as client:
        name = client.repo_name or ""
        a = client.open_claim(
            claim_seed(
                repo=name,
                objective="rework the app core",
                agent="alice",
                session="claude-SA",
                base_commit="HEAD",
                create_worktree=True,
                paths=["src/app/core.py", "src/app/api.py"],
                ttl=3600,
            )
        )["claim"]
        b_view = client.open_claim(
            claim_seed(
                repo=name,
                objective="new api endpoint",
                agent="bob",
                session="codex-SB",
                base_commit="HEAD",
                create_worktree=True,
                paths=["src/app/api.py", "src/app/__init__.py"],
                ttl=3600,
            )
        )
        b = b_view["claim"]
        room = b_view["meeting"]
        tree_a, tree_b = Path(str(a["worktree"])), Path(str(b["worktree"]))

        ev, start_a = fixture("claude", "session_start", SESSION="SA", WORKTREE=str(tree_a))
        _, start_out, _ = call(claude[ev], start_a, tree_a, env)
        ev, start_b = fixture("codex", "session_start", SESSION="SB", WORKTREE=str(tree_b))
        call(codex[ev], start_b, tree_b, env)
        ev, patch = fixture(
            "codex", "edit", SESSION="SB", WORKTREE=str(tree_b), PATCH=_patch("src/app/api.py")
        )
        denied = decision("codex", *call(codex[ev], patch, tree_b, env)[:2])
        untouched = (tree_b / "src/app/api.py").read_text()

        meeting = client.get_meeting(room["id"])["meeting"]
        proposed = client.propose(
            room["id"],
            expected_meeting_revision=meeting["revision"],
            claim_id=b["id"],
            resolution={
                "type": "split_ownership",
                "assignments": [
                    {"claimId": a["id"], "targets": ["src/app/core.py"]},
                    {"claimId": b["id"], "targets": ["src/app/api.py", "src/app/__init__.py"]},
                ],
            },
        )["meeting"]
        settled = client.accept_proposal(
            room["id"],
            proposed["proposals"][-1]["id"],
            expected_meeting_revision=proposed["revision"],
            claim_id=a["id"],
        )["meeting"]

        retried = decision("codex", *call(codex[ev], patch, tree_b, env)[:2])
        ev, edit_a = fixture(
            "claude",
            "edit",
            SESSION="SA",
            WORKTREE=str(tree_a),
            FILE=str(tree_a / "src/app/api.py"),
            OLD="def f():",
            NEW="def f():  # claude",
        )
        now_theirs = decision("claude", *call(claude[ev], edit_a, tree_a, env)[:2])
        sessions = {s["sessionId"] for s in client.list_agents(repo=name)["agents"]}

    assert b["status"] == "negotiating" and room["status"] == "open"
    assert a["id"] in json.loads(start_out)["hookSpecificOutput"]["additionalContext"]
    assert denied[0] == "deny"
    assert a["id"] in denied[1] and f"detente meeting propose {room['id']}" in denied[1]
    assert untouched == "def f():\n    return 1\n"
    assert settled["status"] == "resolved"
    assert retried[0] == "allow"
    assert now_theirs[0] == "deny" and b["id"] in now_theirs[1]
    assert {"claude-SA", "codex-SB"} <= sessions
