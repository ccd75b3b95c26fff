"""The protocol from the command line (issue #12): printed split options that are
complete and safe to run as printed, structured contract changes, drafts."""

from __future__ import annotations

import shlex

from cli_harness import Cli


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    assert words[0] == "detente", command
    return words[1:]


def test_the_printed_split_option_runs_as_printed_and_keeps_the_holders_other_scope(
    cli: Cli,
) -> None:
    a = cli.open("src/pkg/**", "docs/guide.md", agent="a")["claim"]["id"]
    opened = cli.open("README.md", "docs/**", agent="d")
    assert opened["claim"]["status"] == "negotiating"
    split = next(o for o in opened["options"] if o["type"] == "split_ownership")
    assert f"--split {a}=docs/guide.md" in split["command"]

    code, resolved = cli.json(*_argv(split["command"]))

    assert code == 0, resolved
    code, checked = cli.json("claim", "check", a, "src/pkg/a.py")
    assert code == 0, checked
    code, checked = cli.json("claim", "check", opened["claim"]["id"], "README.md")
    assert code == 0, checked


def test_when_everything_is_contested_the_printed_split_carves_the_file_out_of_the_holder(
    cli: Cli,
) -> None:
    holder = cli.open("src/**", agent="e1")["claim"]["id"]
    opened = cli.open("src/pkg/a.py", agent="e2")
    newcomer = opened["claim"]["id"]
    split = next(o for o in opened["options"] if o["type"] == "split_ownership")
    assert "EDIT" not in split["command"] and "PATHS" not in split["command"]
    assert split["command"].endswith(f"--split {holder}=")

    code, resolved = cli.json(*_argv(split["command"]))

    assert code == 0, resolved
    assert cli.json("claim", "check", newcomer, "src/pkg/a.py")[0] == 0
    assert cli.json("claim", "check", holder, "src/pkg/b.py")[0] == 0
    assert cli.json("claim", "check", holder, "src/pkg/a.py")[0] == 6


def test_contract_changes_keep_their_structure_and_overlap_on_the_area(cli: Cli) -> None:
    first = cli.open(
        "src/pkg/a.py", agent="a", contract="http:POST /v1/settlements:adds Idempotency-Key"
    )
    assert first["claim"]["expectedContractChanges"] == [
        {"type": "http", "area": "POST /v1/settlements", "change": "adds Idempotency-Key"}
    ]
    second = cli.open("src/pkg/b.py", agent="b", contract="http:POST /v1/settlements:renames it")
    assert second["claim"]["status"] == "negotiating"
    assert second["overlaps"][0]["kind"] == "contract"
    third = cli.open("docs/guide.md", agent="c", contract="settlement docs")
    assert third["claim"]["expectedContractChanges"] == ["settlement docs"]


def test_a_draft_has_no_worktree_and_blocks_nobody_until_it_is_announced(cli: Cli) -> None:
    code, draft = cli.json(
        "claim", "open", "-o", "later", "-p", "src/pkg/a.py", "--agent", "d", "--draft"
    )
    assert code == 0, draft
    assert draft["claim"]["status"] == "draft"
    assert draft["worktree"] is None
    holder = cli.open("src/**", agent="h")
    assert holder["claim"]["status"] == "active"

    code, announced = cli.json("claim", "announce", draft["claim"]["id"])

    assert code == 6, announced
    assert announced["claim"]["status"] == "negotiating"
    assert announced["overlaps"][0]["claimId"] == holder["claim"]["id"]
