"""``detente claim merge-check`` from the command line: the drift of a claim's work and
what its branch would merge into, in text and JSON, locally and against a server."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_harness import Cli


def _commit(worktree: Path, rel: str, text: str) -> None:
    (worktree / rel).write_text(text)
    for args in (["add", "-A"], ["commit", "-q", "-m", f"edit {rel}"]):
        subprocess.run(["git", *args], cwd=worktree, check=True, capture_output=True)


def test_merge_check_reports_the_paths_a_claims_work_changed_outside_its_scope(
    cli: Cli,
) -> None:
    opened = cli.open("src/pkg/**", agent="alice")["claim"]
    worktree = Path(opened["worktree"])
    _commit(worktree, "src/pkg/a.py", "a = 10\n")
    _commit(worktree, "docs/guide.md", "rewritten\n")

    code, body = cli.json("claim", "merge-check", opened["id"])

    assert code == 0, body
    assert body["drifted"] == ["docs/guide.md"]
    assert body["mergeCheck"]["conflicts"] == []
    assert body["mergeCheck"]["checked"] == ["ref:refs/heads/main"]
    text = cli("claim", "merge-check", opened["id"])
    assert text.exit_code == 0
    assert "every merge is clean" in text.stdout
    assert "drifted outside the scope: docs/guide.md" in text.stdout
    status = cli("claim", "status", opened["id"])
    assert "drifted outside the scope: docs/guide.md" in status.stdout


def test_merge_check_of_a_claim_without_a_branch_exits_2(cli: Cli) -> None:
    code, body = cli.json(
        "claim", "open", "-o", "no branch", "--agent", "alice", "-p", "src/pkg/**", "--no-worktree"
    )
    assert code == 0, body
    opened = body["claim"]

    result = cli("claim", "merge-check", opened["id"])

    assert result.exit_code == 2


def test_a_predicted_conflict_prints_the_hunk_and_its_meeting_shows_it(cli: Cli) -> None:
    alice = cli.open("src/pkg/a.py", agent="alice")["claim"]
    bob = cli.open("docs/**", agent="bob")["claim"]
    _commit(Path(alice["worktree"]), "src/pkg/a.py", "a = 10\n")
    _commit(Path(bob["worktree"]), "src/pkg/a.py", "a = 20\n")

    text = cli("claim", "merge-check", bob["id"])

    assert text.exit_code == 0, text.output
    assert f"conflict with {alice['id']} in src/pkg/a.py" in text.stdout
    assert "a = 20" in text.stdout and "a = 10" in text.stdout
    code, body = cli.json("claim", "status", bob["id"])
    assert code == 0, body
    [room] = [m for m in body["meetings"] if m["mergeConflicts"]]
    shown = cli("meeting", "show", room["id"])
    assert f"predicted merge conflict of {' and '.join(sorted([alice['id'], bob['id']]))}" in (
        shown.stdout
    )
    assert "<<<<<<<" in shown.stdout


def test_control_characters_in_a_conflicting_hunk_are_printed_escaped(cli: Cli) -> None:
    alice = cli.open("src/pkg/a.py", agent="alice")["claim"]
    bob = cli.open("docs/**", agent="bob")["claim"]
    _commit(Path(alice["worktree"]), "src/pkg/a.py", "a = 10\n")
    # A branch's file may hold terminal escapes (set the title, clear the screen).
    _commit(Path(bob["worktree"]), "src/pkg/a.py", "a = '\x1b]0;owned\x07\x1b[2J'\n")

    text = cli("claim", "merge-check", bob["id"])
    [room] = [
        m for m in cli.json("claim", "status", bob["id"])[1]["meetings"] if m["mergeConflicts"]
    ]
    shown = cli("meeting", "show", room["id"])

    for out in (text.stdout, shown.stdout):
        assert "\x1b" not in out and "\x07" not in out
        assert "a = '\\x1b]0;owned\\x07\\x1b[2J'" in out
