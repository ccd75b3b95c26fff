"""``detente claim takeover / approve-takeover`` in local mode, with a fake clock."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cli_harness import Cli, Git

from detente.clock import FakeClock

TTL = 5
GRACE = 30  # Policy.takeover_grace_seconds


def _claim(cli: Cli, claim_id: str) -> dict[str, Any]:
    code, body = cli.json("claim", "status", claim_id)
    assert code == 0, body
    claim: dict[str, Any] = body["claim"]
    return claim


def _worked_on(cli: Cli, git: Git, *paths: str, **options: str) -> tuple[dict[str, Any], str]:
    """A claim whose worktree has one commit (docs/new.md); returns it and its head."""
    claim = cli.open(*paths, agent="alice", ttl=str(TTL), **options)["claim"]
    worktree = Path(claim["worktree"])
    (worktree / "docs" / "new.md").write_text("committed\n")
    git(worktree, "add", "docs/new.md")
    git(worktree, "commit", "-q", "-m", "new doc")
    return claim, git(worktree, "rev-parse", "HEAD")


def test_taking_over_an_expired_claim_branches_from_its_head_and_prints_the_rescue_ref(
    cli: Cli, git: Git, repo: Path, clock: FakeClock
) -> None:
    pred, head = _worked_on(cli, git, "docs/**")
    old_worktree = Path(pred["worktree"])
    (old_worktree / "docs" / "guide.md").write_text("half-edited\n")
    (old_worktree / "docs" / "wip.md").write_text("untracked\n")
    clock.advance(TTL + GRACE + 1)

    result = cli("claim", "takeover", pred["id"], "--agent", "bob")

    assert result.exit_code == 0, result.output
    rescue_ref = f"refs/detente/rescue/{pred['id']}"
    assert rescue_ref in result.stdout
    oid = git(repo, "rev-parse", rescue_ref)
    successor = _claim(cli, _claim(cli, pred["id"])["successorId"])
    new_worktree = Path(successor["worktree"])
    assert f"restore it: cd {new_worktree} && git checkout {oid} -- ." in result.stdout
    assert git(new_worktree, "rev-parse", "HEAD") == head
    assert successor["branch"] != pred["branch"]
    assert git(new_worktree, "symbolic-ref", "--short", "HEAD") == successor["branch"]
    assert successor["status"] == "active"
    assert successor["agent"]["name"] == "bob"
    assert successor["paths"] == ["docs/**"]
    assert successor["takeoverOf"]["headCommit"] == head
    # The predecessor's worktree, branch and dirty files are left exactly as they were.
    assert str(old_worktree) in git(repo, "worktree", "list")
    assert git(repo, "rev-parse", f"refs/heads/{pred['branch']}") == head
    assert (old_worktree / "docs" / "wip.md").read_text() == "untracked\n"
    assert _claim(cli, pred["id"])["status"] == "taken_over"
    # The printed restore command brings the rescued files into the new worktree.
    git(new_worktree, "checkout", oid, "--", ".")
    assert (new_worktree / "docs" / "guide.md").read_text() == "half-edited\n"
    assert (new_worktree / "docs" / "wip.md").read_text() == "untracked\n"


def test_takeover_json_reports_pieces_worktree_and_no_rescue_for_a_clean_worktree(
    cli: Cli, git: Git, clock: FakeClock
) -> None:
    pred, head = _worked_on(cli, git, "docs/**", "README.md")
    clock.advance(TTL + GRACE + 1)

    code, body = cli.json(
        "claim", "takeover", pred["id"], "--piece", "README.md=discard", "--path", "src/pkg/a.py",
        "--objective", "finish the docs", "--ttl", "60",
    )  # fmt: skip

    assert code == 0, body
    claim = body["claim"]
    assert claim["objective"] == "finish the docs"
    assert sorted(claim["paths"]) == ["docs/**", "src/pkg/a.py"]
    assert claim["lease"]["ttlSeconds"] == 60
    assert {p["target"]: p["decision"] for p in claim["takeoverOf"]["pieces"]} == {
        "docs/**": "continue",
        "README.md": "discard",
    }
    assert body["rescue"] is None
    assert body["restore"] is None
    assert body["worktree"]["headOid"] == head
    assert body["worktree"]["branch"] == claim["branch"] != pred["branch"]


def test_taking_over_a_live_claim_exits_7_and_creates_nothing(
    cli: Cli, git: Git, repo: Path
) -> None:
    pred = cli.open("docs/**", agent="alice")["claim"]
    branches = git(repo, "branch", "--list")
    worktrees = git(repo, "worktree", "list")

    code, body = cli.json("claim", "takeover", pred["id"], "--agent", "bob")

    assert code == 7
    assert body["code"] == "invalid_transition"
    assert git(repo, "branch", "--list") == branches
    assert git(repo, "worktree", "list") == worktrees
    assert [c["id"] for c in cli.json("claim", "list")[1]["claims"]] == [pred["id"]]
    assert _claim(cli, pred["id"])["status"] == "active"


def test_taking_over_inside_the_grace_period_exits_7_with_the_time_it_ends(
    cli: Cli, clock: FakeClock
) -> None:
    pred = cli.open("docs/**", agent="alice", ttl=str(TTL))["claim"]
    clock.advance(TTL + 1)

    code, body = cli.json("claim", "takeover", pred["id"])

    assert code == 7
    assert "readyAt" in body
    assert _claim(cli, pred["id"])["status"] == "expired"


def test_an_abandoned_claim_can_be_taken_over_at_once(cli: Cli, git: Git) -> None:
    pred, head = _worked_on(cli, git, "docs/**")
    cli.json("claim", "abandon", pred["id"])

    code, body = cli.json("claim", "takeover", pred["id"], "--no-worktree")

    assert code == 0, body
    assert body["worktree"] is None
    assert body["claim"]["takeoverOf"]["headCommit"] == head
    assert body["claim"]["branch"] is None


def test_a_gated_takeover_waits_for_a_human_approval_and_exits_6_until_then(
    cli: Cli, git: Git, clock: FakeClock
) -> None:
    pred, _ = _worked_on(cli, git, "docs/**", contract="docs API v2")
    clock.advance(TTL + GRACE + 1)

    code, body = cli.json("claim", "takeover", pred["id"], "--agent", "bob")

    assert code == 6, body
    successor = body["claim"]
    assert successor["status"] == "blocked"
    assert successor["takeoverOf"]["pending"] is True
    assert body["approve"] == [f"detente claim approve-takeover {successor['id']} --approver NAME"]
    text = cli("claim", "status", successor["id"])
    assert "awaits approval" in text.stdout
    assert cli.json("claim", "check", successor["id"], "docs/guide.md")[0] == 6

    result = cli("claim", "approve-takeover", successor["id"], "--approver", "carol")

    assert result.exit_code == 0, result.output
    assert re.search(rf"{successor['id']}: active .*carol \(human\)", result.stdout)
    assert _claim(cli, pred["id"])["status"] == "taken_over"
    assert cli.json("claim", "check", successor["id"], "docs/guide.md")[0] == 0
    again, problem = cli.json("claim", "approve-takeover", successor["id"], "--approver", "dan")
    assert (again, problem["code"]) == (7, "invalid_transition")


def test_only_a_codeowners_owner_may_approve_as_owner(
    cli: Cli, git: Git, repo: Path, clock: FakeClock
) -> None:
    (repo / "CODEOWNERS").write_text("docs/ @docs-lead\n")
    git(repo, "add", "CODEOWNERS")
    git(repo, "commit", "-q", "-m", "owners")
    pred, _ = _worked_on(cli, git, "docs/**", contract="docs API v2")
    clock.advance(TTL + GRACE + 1)
    code, body = cli.json("claim", "takeover", pred["id"], "--agent", "bob")
    assert code == 6, body
    successor = body["claim"]["id"]
    owner_command = f"detente claim approve-takeover {successor} --approver @docs-lead --owner"
    assert owner_command in body["approve"]

    refused, problem = cli.json(
        "claim", "approve-takeover", successor, "--approver", "@someone", "--owner"
    )
    code, approved = cli.json(
        "claim", "approve-takeover", successor, "--approver", "@docs-lead", "--owner"
    )

    assert (refused, problem["code"]) == (8, "forbidden")
    assert code == 0, approved
    assert approved["claim"]["status"] == "active"
    assert approved["claim"]["takeoverOf"]["approvals"][0]["kind"] == "owner"


def test_the_predecessors_fencing_token_is_stale_after_a_takeover(
    cli: Cli, clock: FakeClock
) -> None:
    pred = cli.open("docs/**", agent="alice", ttl=str(TTL))["claim"]
    clock.advance(TTL + GRACE + 1)
    code, body = cli.json("claim", "takeover", pred["id"], "--no-worktree")
    assert code == 0, body
    successor = body["claim"]

    stale, problem = cli.json(
        "claim", "check", successor["id"], "docs/guide.md",
        "--fencing-token", str(pred["fencingToken"]),
    )  # fmt: skip
    fresh, _ = cli.json(
        "claim", "check", successor["id"], "docs/guide.md",
        "--fencing-token", str(successor["fencingToken"]),
    )  # fmt: skip

    assert successor["fencingToken"] > pred["fencingToken"]
    assert (stale, problem["code"]) == (8, "stale_fencing_token")
    assert fresh == 0


def test_a_takeover_for_a_registered_session_names_the_sessions_agent(
    cli: Cli, git: Git, monkeypatch: Any
) -> None:
    monkeypatch.delenv("DETENTE_AGENT", raising=False)
    monkeypatch.setenv("USER", "someone-else")
    pred, _ = _worked_on(cli, git, "docs/**")
    cli.json("claim", "abandon", pred["id"])
    cli.json("agents", "register", "--name", "agent-b", "--session", "ses_b")

    code, body = cli.json("claim", "takeover", pred["id"], "--no-worktree", "--session", "ses_b")

    assert code == 0, body
    assert body["claim"]["agent"]["name"] == "agent-b"
    assert body["claim"]["agent"]["sessionId"] == "ses_b"
