"""Issue 30 from the CLI: a resolution over every kind of target takes effect, a split
never benefits a claim it does not name, status agrees with ``claim check``, and a
dissolved room reads as one."""

from __future__ import annotations

from typing import Any

from cli_harness import Cli


def _claim(cli: Cli, claim_id: str) -> dict[str, Any]:
    code, body = cli.json("claim", "status", claim_id)
    assert code == 0, body
    claim: dict[str, Any] = body["claim"]
    return claim


def _audit_holds(cli: Cli) -> None:
    result = cli("audit", "verify")
    assert result.exit_code == 0, result.stdout


def test_a_handoff_from_a_module_claim_moves_the_file_to_the_recipient(cli: Cli) -> None:
    alice = cli.open(agent="alice", module="pkg")["claim"]["id"]
    second = cli.open("src/pkg/a.py", agent="bob")
    bob, room = second["claim"]["id"], second["meeting"]["id"]
    code, body = cli.json(
        "meeting", "resolve", room, "--handoff", "--from", alice, "--to", bob, "--by", "carol"
    )
    assert code == 0, body
    assert body["meeting"]["resolution"]["targets"] == ["src/pkg/a.py"]
    code, body = cli.json("meeting", "accept-handoff", room, "--as", bob)
    assert code == 0, body

    assert cli.json("claim", "check", bob, "src/pkg/a.py")[0] == 0
    assert cli.json("claim", "check", alice, "src/pkg/a.py")[0] != 0
    assert cli.json("claim", "check", alice, "src/pkg/b.py")[0] == 0
    assert _claim(cli, alice)["carveOuts"] != {}
    _audit_holds(cli)


def test_a_split_that_leaves_a_participant_out_is_refused_and_changes_nothing(
    cli: Cli,
) -> None:
    a = cli.open("src/pkg/*.py", agent="alice")["claim"]["id"]
    b = cli.open("src/pkg/a.py", agent="bob")
    c = cli.open(agent="carol", symbol="src/pkg/a.py::K.a")["claim"]["id"]
    room = b["meeting"]["id"]

    code, body = cli.json(
        "meeting", "resolve", room,
        "--split", f"{c}=src/pkg/a.py::K.a", "--split", f"{a}=", "--by", "h",
    )  # fmt: skip

    assert code != 0, body
    assert b["claim"]["id"] in body["detail"]
    assert _claim(cli, b["claim"]["id"])["status"] == "negotiating"
    assert cli.json("meeting", "show", room)[1]["meeting"]["status"] == "open"
    _audit_holds(cli)


def test_a_serialized_claim_reads_what_claim_check_answers(cli: Cli) -> None:
    a = cli.open("f.py", agent="alice")["claim"]["id"]
    second = cli.open("f.py", agent="bob")
    b, room = second["claim"]["id"], second["meeting"]["id"]
    code, body = cli.json(
        "meeting", "resolve", room, "--serialize", "--first", a, "--then", b, "--by", "h"
    )
    assert code == 0, body
    c = cli.open("g.py", agent="carol")["claim"]["id"]
    assert cli.json("claim", "scope", "add", b, "-p", "g.py")[0] in (0, 6)
    assert cli.json("claim", "abandon", c, "--reason", "done")[0] == 0

    status = _claim(cli, b)["status"]
    check = cli.json("claim", "check", b, "f.py")[0]
    assert status == "suspended" and check != 0, (status, check)  # 7: it waits its turn
    _audit_holds(cli)


def test_meeting_show_of_a_dissolved_room_reads_outcome_dissolved(cli: Cli) -> None:
    a = cli.open("f.py", agent="alice")["claim"]["id"]
    room = cli.open("f.py", agent="bob")["meeting"]["id"]
    assert cli.json("claim", "abandon", a, "--reason", "done")[0] == 0

    code, body = cli.json("meeting", "show", room)

    assert code == 0, body
    meeting = body["meeting"]
    assert meeting["status"] == "resolved" and meeting["outcome"] == "dissolved"
    assert meeting["resolution"] is None
