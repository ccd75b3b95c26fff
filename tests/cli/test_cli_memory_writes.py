"""``memory patch``/``append`` write where the claim works, keep the Markdown's spacing,
and a conflict with a person's edit says what differs."""

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


def test_a_patch_goes_into_the_claims_worktree_by_default(
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
    assert (worktree / "CLAUDE.md").read_text() == CLAUDE.replace("Run make.", "Run ninja.")
    assert (repo / "CLAUDE.md").read_text() == CLAUDE  # the main checkout is untouched


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
    assert (worktree / "CLAUDE.md").read_text() == CLAUDE.replace("Use black.", "Use ruff.")


def test_a_conflict_with_a_persons_edit_names_the_file_hashes_that_differ(
    cli: Cli, repo: Path
) -> None:
    (repo / "CLAUDE.md").write_text(CLAUDE)
    assert cli.json("memory", "register", "CLAUDE.md", "--class", "section_owned")[0] == 0
    read = cli.json("memory", "show", "CLAUDE.md")[1]["document"]["fileHash"]
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
        "--claim", claim["id"],
    )  # fmt: skip

    assert code == 4 and problem["code"] == "revision_conflict"
    assert problem["expected"] == read and problem["actual"] != read
    assert len(problem["actual"]) == 64  # the hash of the file as the person left it
    assert f"you read {read[:12]}" in problem["detail"]
    assert f"the file is now {problem['actual'][:12]}" in problem["detail"]
    assert (repo / "CLAUDE.md").read_text() == edited
