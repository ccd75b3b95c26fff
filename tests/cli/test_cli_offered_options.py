"""The resolution options ``meeting show`` prints are commands that run: a room's split
names every live participant, and never gives two claims a file and a symbol inside it."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from cli_harness import Cli, Git


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    assert words[0] == "detente", command
    return words[1:]


def _offered(cli: Cli, meeting_id: str) -> dict[str, str]:
    code, body = cli.json("meeting", "show", meeting_id)
    assert code == 0, body
    return {o["type"]: o["command"] for o in body["options"]}


def _with_class(repo: Path, git: Git) -> None:
    (repo / "src" / "pkg" / "k.py").write_text(
        "class K:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "k")


def test_the_offered_split_of_a_file_and_a_symbol_inside_it_runs(
    cli: Cli, repo: Path, git: Git
) -> None:
    _with_class(repo, git)
    b = cli.open("src/pkg/k.py", agent="bob")["claim"]["id"]
    c = cli.open("src/pkg/k.py", "README.md", agent="carol")
    e = cli.open(agent="erin", symbol="src/pkg/k.py::K.b")
    meeting = c["meeting"]["id"]
    assert e["claim"]["status"] == "negotiating"

    result = cli(*_argv(_offered(cli, meeting)["split_ownership"]), "--json")

    assert result.exit_code == 0, result.stdout
    assert b in result.stdout


def test_the_offered_split_and_join_name_a_participant_outside_the_waiters_overlaps(
    cli: Cli,
) -> None:
    a = cli.open("src/pkg/a.py", "docs/**", agent="alice")["claim"]["id"]
    b = cli.open("src/pkg/a.py", agent="bob")
    c = cli.open("src/pkg/a.py", "README.md", agent="carol")
    d = cli.open("docs/guide.md", agent="dan")
    meeting = b["meeting"]["id"]
    assert {c["meeting"]["id"], d["meeting"]["id"]} == {meeting}
    code, _ = cli.json("claim", "abandon", a)
    assert code == 0
    code, body = cli.json("meeting", "show", meeting)
    participants: list[Any] = body["meeting"]["participants"]
    offered = _offered(cli, meeting)
    for kind in ("split_ownership", "joint"):
        for claim_id in participants:
            assert claim_id in offered[kind], (kind, offered[kind], participants)

    result = cli(*_argv(offered["split_ownership"]), "--json")

    assert result.exit_code == 0, result.stdout


def test_meeting_show_and_resolve_list_a_participants_modules_and_symbols(
    cli: Cli, repo: Path, git: Git
) -> None:
    _with_class(repo, git)
    cli.open(agent="alice", module="src.pkg")
    opened = cli.open(agent="erin", symbol="src/pkg/k.py::K.b")
    meeting = opened["meeting"]["id"]

    shown = cli("meeting", "show", meeting).stdout

    assert "module src.pkg" in shown and "symbol src/pkg/k.py::K.b" in shown, shown
    code, body = cli.json("meeting", "show", meeting)
    assert code == 0, body
    assert {tuple(p["modules"]) for p in body["participants"]} == {("src.pkg",), ()}
    resolved = cli("meeting", "resolve", meeting, "--escalate", "--by", "h").stdout
    assert "module src.pkg" in resolved, resolved
