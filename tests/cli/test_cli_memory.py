"""``detente memory ...`` in local mode against a real repository and SQLite store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_harness import Cli, Git

CLAUDE = "# CLAUDE.md\n\nIntro.\n\n## Build\n\nRun make.\n\n## Style\n\nUse black.\n"
AGENTS = (
    "# AGENTS\n\nManual.\n\n"
    "<!-- detente:begin generated claims -->\n<!-- detente:end generated claims -->\n"
)


def memory_claim(cli: Cli, agent: str, target: str) -> dict[str, Any]:
    code, body = cli.json(
        "claim",
        "open",
        "-o",
        f"{agent} edits memory",
        "--agent",
        agent,
        "--memory",
        target,
        "--no-worktree",
    )
    assert code == 0, body
    claim: dict[str, Any] = body["claim"]
    return claim


def test_register_show_and_patch_a_section_from_a_file(cli: Cli, repo: Path) -> None:
    (repo / "CLAUDE.md").write_text(CLAUDE)
    code, registered = cli.json("memory", "register", "CLAUDE.md", "--class", "section_owned")
    assert code == 0, registered
    claim = memory_claim(cli, "alice", "CLAUDE.md#build")
    (repo.parent / "body.md").write_text("\nRun ninja.\n\n")

    result = cli(
        "memory",
        "patch",
        "CLAUDE.md#build",
        "--from",
        str(repo.parent / "body.md"),
        "--claim",
        claim["id"],
    )

    assert result.exit_code == 0, result.output
    assert "patched CLAUDE.md#build: revision 2" in result.stdout
    assert (repo / "CLAUDE.md").read_text() == CLAUDE.replace("Run make.", "Run ninja.")
    code, shown = cli.json("memory", "show", "CLAUDE.md")
    build = next(s for s in shown["document"]["sections"] if s["key"] == "build")
    assert (code, build["revision"], build["ownerClaimId"]) == (0, 2, claim["id"])
    text = cli("memory", "show", "CLAUDE.md")
    assert "build" in text.stdout and "in sync" in text.stdout


def test_a_patch_from_a_stale_revision_exits_4_and_leaves_the_file(cli: Cli, repo: Path) -> None:
    (repo / "CLAUDE.md").write_text(CLAUDE)
    cli.json("memory", "register", "CLAUDE.md")
    claim = memory_claim(cli, "alice", "CLAUDE.md#style")
    (repo.parent / "body.md").write_text("\nUse ruff.\n")

    code, problem = cli.json(
        "memory",
        "patch",
        "CLAUDE.md#style",
        "--from",
        str(repo.parent / "body.md"),
        "--claim",
        claim["id"],
        "--expect-revision",
        "7",
    )

    assert (code, problem["code"], problem["expected"], problem["actual"]) == (
        4,
        "revision_conflict",
        7,
        1,
    )
    assert (repo / "CLAUDE.md").read_text() == CLAUDE


def test_render_reports_a_user_edit_and_reconcile_moves_it_to_an_overlay(
    cli: Cli, repo: Path
) -> None:
    (repo / "AGENTS.md").write_text(AGENTS)
    cli.json("memory", "register", "AGENTS.md", "--class", "generated")
    claim = memory_claim(cli, "alice", "CLAUDE.md")
    code, first = cli.json("memory", "render")
    assert (code, first["results"][0]["rendered"]) == (0, ["claims"])
    edited = (repo / "AGENTS.md").read_text().replace("(active)", "(active, ask first)")
    (repo / "AGENTS.md").write_text(edited)

    result = cli("memory", "render", "AGENTS.md")

    assert result.exit_code == 0, result.output
    assert "reconciliation rec_" in result.stdout
    assert (repo / "AGENTS.md").read_text() == edited
    code, listed = cli.json("memory", "list")
    [doc] = listed["documents"]
    [rec] = doc["reconciliations"]
    code, done = cli.json(
        "memory", "reconcile", "AGENTS.md", "--id", rec["id"], "--decision", "overlay"
    )
    assert code == 0, done
    data = (repo / "AGENTS.md").read_text()
    assert data.count(claim["id"]) == 2  # re-rendered region + the user's overlay after it
    assert "(active, ask first)" in data.split("<!-- detente:end generated claims -->")[1]


def test_render_with_broken_markers_exits_1_and_leaves_the_file(
    cli: Cli, git: Git, repo: Path
) -> None:
    (repo / "AGENTS.md").write_text(AGENTS)
    cli.json("memory", "register", "AGENTS.md", "--class", "generated")
    broken = AGENTS.replace("<!-- detente:end generated claims -->\n", "")
    (repo / "AGENTS.md").write_text(broken)
    git(repo, "commit", "-q", "-am", "a person breaks the markers on main")

    code, body = cli.json("memory", "render")

    assert code == 1 and body["results"][0]["error"]["code"] == "validation_error"
    assert (repo / "AGENTS.md").read_text() == broken


def test_a_persons_unsaved_edit_in_the_same_section_is_never_overwritten(
    cli: Cli, repo: Path
) -> None:
    (repo / "CLAUDE.md").write_text(CLAUDE)
    assert cli.json("memory", "register", "CLAUDE.md", "--class", "section_owned")[0] == 0
    claim = memory_claim(cli, "alice", "CLAUDE.md#build")
    edited = CLAUDE.replace("Run make.", "Run make.\nA person's note.")
    (repo / "CLAUDE.md").write_text(edited)  # a person edits Build while alice works
    (repo.parent / "body.md").write_text("\nRun ninja.\n\n")

    result = cli(
        "memory",
        "patch",
        "CLAUDE.md#build",
        "--from",
        str(repo.parent / "body.md"),
        "--claim",
        claim["id"],
    )

    assert result.exit_code == 4, result.output
    assert (repo / "CLAUDE.md").read_text() == edited


def test_a_log_registered_before_it_exists_reads_absent_not_a_persons_edit(
    cli: Cli, repo: Path
) -> None:
    shown = cli("memory", "register", "DECISIONS.md", "--class", "append_only").stdout

    assert "ABSENT FROM THE BRANCH" in shown and "person's edit" not in shown, shown
    claim = memory_claim(cli, "alice", "DECISIONS.md")
    code, body = cli.json(
        "memory", "append", "DECISIONS.md", "--text", "- one", "--claim", claim["id"]
    )
    assert code == 0, body
    assert "in sync" in cli("memory", "show", "DECISIONS.md").stdout
