"""``meeting list`` fits 80 columns; an escalated meeting's deadline counts down honestly."""

from __future__ import annotations

import pytest
from cli_harness import Cli


def _pair(cli: Cli) -> tuple[str, str, str]:
    first = cli.open("src/**", agent="alice")["claim"]["id"]
    second = cli.open("src/pkg/a.py", agent="bob")
    return first, second["claim"]["id"], second["meeting"]["id"]


def test_meeting_list_fits_80_columns_with_every_id_whole(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob, meeting = _pair(cli)
    monkeypatch.setenv("COLUMNS", "80")
    lines = cli("meeting", "list").stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, lines
    assert lines[0].split()[:2] == [meeting, "open"]
    assert "deadline in 1" in lines[0]  # 14m59s or so: the real clock
    assert lines[1].split() == ["participants", f"{alice},", bob]
    assert lines[2].split() == ["contested", "src/**"]


def test_an_escalated_meeting_before_its_deadline_shows_the_time_left(cli: Cli) -> None:
    _, _, meeting = _pair(cli)
    code, body = cli.json("meeting", "resolve", meeting, "--escalate", "--by", "carol")
    assert code == 0 and body["meeting"]["status"] == "escalated", body
    shown = cli("meeting", "show", meeting).stdout
    line = next(x for x in shown.splitlines() if x.strip().startswith("deadline"))
    assert "(over)" not in line and "passed" not in line
    assert line.split()[1] == "in"
    listed = cli("meeting", "list").stdout.splitlines()[0]
    assert listed.split()[:2] == [meeting, "escalated"] and "deadline in" in listed
