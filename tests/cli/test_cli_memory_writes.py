"""``memory patch``/``append`` commit on the integration branch (the main checkout follows,
a claim's worktree picks it up when it rebases), keep the Markdown's spacing, and a
person's edit in the checkout wins by revision."""

from __future__ import annotations

from pathlib import Path

from cli_harness import Cli, Git

CLAUDE = "# CLAUDE.md\n\nIntro.\n\n## Build\n\nRun make.\n\n## Style\n\nUse black.\n"


def _registered(cli: Cli, git: Git, repo: Path) -> None:
    (repo / "CLAUDE.md").write_text(CLAUDE)
    git(repo, "add", "CLAUDE.md")
    git(repo, "commit", "-q", "-m", "memory file")
    code, body = cli.json("memory", "register", "CLAUDE.md", "--class", "section_owned")
    assert code == 0, body


def test_a_patch_lands_on_main_and_the_main_checkout_follows(
    cli: Cli, git: Git, repo: Path, tmp_path: Path
) -> None:
    _registered(cli, git, repo)
    claim = cli.open("src/pkg/a.py", memory="CLAUDE.md#build")["claim"]
    worktree = Path(claim["worktree"])
    (tmp_path / "body.md").write_text("Run ninja.\n")

    code, body = cli.json(
        "memory", "patch", "CLAUDE.md#build", "--from", str(tmp_path / "body.md"),
        "--claim", claim["id"],
    )  # fmt: skip

    assert code == 0, body
    assert git(repo, "show", "main:CLAUDE.md") + "\n" == CLAUDE.replace("Run make.", "Run ninja.")
    assert (repo / "CLAUDE.md").read_text() == CLAUDE.replace("Run make.", "Run ninja.")
    assert (worktree / "CLAUDE.md").read_text() == CLAUDE  # until the claim rebases


def test_a_replaced_section_keeps_the_blank_lines_around_its_heading(
    cli: Cli, git: Git, repo: Path
) -> None:
    _registered(cli, git, repo)
    claim = cli.open("src/pkg/a.py", memory="CLAUDE.md#style")["claim"]
    worktree = Path(claim["worktree"])
    (repo.parent / "body.md").write_text("Use ruff.")  # no blank lines, no final newline

    code, body = cli.json(
        "memory", "patch", "CLAUDE.md#style", "--from", str(repo.parent / "body.md"),
        "--claim", claim["id"],
    )  # fmt: skip

    assert code == 0, body
    assert (repo / "CLAUDE.md").read_text() == CLAUDE.replace("Use black.", "Use ruff.")
    git(worktree, "rebase", "-q", "main")
    assert (worktree / "CLAUDE.md").read_text() == CLAUDE.replace("Use black.", "Use ruff.")


def test_a_persons_edit_in_the_checkout_wins_and_a_patch_on_the_older_revision_is_409(
    cli: Cli, repo: Path
) -> None:
    (repo / "CLAUDE.md").write_text(CLAUDE)
    assert cli.json("memory", "register", "CLAUDE.md", "--class", "section_owned")[0] == 0
    code, opened = cli.json(
        "claim", "open", "-o", "build notes", "--memory", "CLAUDE.md#build", "--no-worktree"
    )
    assert code == 0, opened
    claim = opened["claim"]
    edited = CLAUDE.replace("Run make.", "Run make.\nA person's note.")
    (repo / "CLAUDE.md").write_text(edited)
    (repo.parent / "body.md").write_text("Run ninja.\n")

    code, problem = cli.json(
        "memory", "patch", "CLAUDE.md#build", "--from", str(repo.parent / "body.md"),
        "--claim", claim["id"], "--expect-revision", "1",
    )  # fmt: skip

    assert code == 4 and problem["code"] == "revision_conflict"
    assert (problem["expected"], problem["actual"]) == (1, 2)
    assert "CLAUDE.md#build is at revision 2, not 1" in problem["detail"]
    assert (repo / "CLAUDE.md").read_text() == edited
    shown = cli.json("memory", "show", "CLAUDE.md")[1]["document"]
    assert [s["revision"] for s in shown["sections"] if s["key"] == "build"] == [2]
    assert shown["onDisk"]["inSync"] is True


def test_memory_read_prints_mains_text_and_claim_status_says_the_worktree_is_behind(
    cli: Cli, git: Git, repo: Path, tmp_path: Path
) -> None:
    _registered(cli, git, repo)
    claim = cli.open("src/pkg/a.py", memory="CLAUDE.md#build")["claim"]
    (tmp_path / "body.md").write_text("Run ninja.\n")
    code, body = cli.json(
        "memory", "patch", "CLAUDE.md#build", "--from", str(tmp_path / "body.md"),
        "--claim", claim["id"],
    )  # fmt: skip
    assert code == 0, body
    (repo / "CLAUDE.md").write_text("a person's scratch text\n")  # not the authoritative copy

    read = cli("memory", "read", "CLAUDE.md")
    status = cli.json("claim", "status", claim["id"])[1]

    assert read.exit_code == 0 and read.stdout == CLAUDE.replace("Run make.", "Run ninja.")
    [memory] = status["memory"]
    assert memory["path"] == "CLAUDE.md" and memory["worktreeState"] == "behind"
    assert any("is edited" in note for note in memory["notes"])


def test_an_entry_file_that_is_not_utf8_is_a_usage_error_and_nothing_is_written(
    cli: Cli, git: Git, repo: Path, tmp_path: Path
) -> None:
    _registered(cli, git, repo)
    claim = cli.open("src/pkg/a.py", memory="CLAUDE.md#build")["claim"]
    (tmp_path / "body.md").write_bytes(b"Run \xff\xfe make.\n")
    before = git(repo, "rev-parse", "main")

    code, body = cli.json(
        "memory", "patch", "CLAUDE.md#build", "--from", str(tmp_path / "body.md"),
        "--claim", claim["id"],
    )  # fmt: skip

    assert code == 2, body
    assert body["code"] == "validation_error" and body["field"] == "from"
    assert "UTF-8" in body["detail"]
    assert git(repo, "rev-parse", "main") == before
