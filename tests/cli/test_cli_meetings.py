"""``detente meeting ...`` in local mode: negotiating pairs resolved from the CLI."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from cli_harness import Cli, Git


def _pair(cli: Cli) -> tuple[str, str, str]:
    """alice holds src/**; bob's src/pkg/a.py negotiates. Returns (alice, bob, meeting)."""
    first = cli.open("src/**", agent="alice")["claim"]["id"]
    second = cli.open("src/pkg/a.py", agent="bob")
    assert second["claim"]["status"] == "negotiating"
    return first, second["claim"]["id"], second["meeting"]["id"]


def _claim(cli: Cli, claim_id: str) -> dict[str, Any]:
    code, body = cli.json("claim", "status", claim_id)
    assert code == 0, body
    claim: dict[str, Any] = body["claim"]
    return claim


def _meeting(cli: Cli, meeting_id: str) -> dict[str, Any]:
    code, body = cli.json("meeting", "show", meeting_id)
    assert code == 0, body
    return body


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    assert words[0] == "detente", command
    return words[1:]


def test_a_split_resolution_activates_the_second_claim_and_check_refuses_the_other_half(
    cli: Cli,
) -> None:
    alice, bob, meeting = _pair(cli)
    assert cli.json("claim", "check", bob, "src/pkg/a.py")[0] == 6  # negotiating: not yet

    code, body = cli.json(
        "meeting", "resolve", meeting,
        "--split", f"{alice}=src/pkg/b.py", "--split", f"{bob}=src/pkg/a.py", "--by", "carol",
    )  # fmt: skip

    assert code == 0, body
    assert body["meeting"]["status"] == "resolved"
    assert body["meeting"]["resolution"]["type"] == "split_ownership"
    assert body["meeting"]["resolution"]["resolvedBy"] == "carol"
    second = _claim(cli, bob)
    assert second["status"] == "active"
    assert second["paths"] == ["src/pkg/a.py"]
    holder = _claim(cli, alice)  # keeps src/** minus what the split gave bob
    assert holder["paths"] == ["src/**", "src/pkg/b.py"]
    assert holder["carveOuts"] == {"src/**": ["src/pkg/a.py"]}
    assert cli.json("claim", "check", alice, "src/main.py")[0] == 0
    shown = " ".join(cli("claim", "status", alice).stdout.split())
    assert "carved src/** minus src/pkg/a.py" in shown
    code, refused = cli.json("claim", "check", bob, "src/pkg/b.py")
    assert code == 6
    assert refused["code"] == "overlap_blocking"
    assert refused["blockers"][0]["claimId"] == alice
    code, allowed = cli.json("claim", "check", bob, "src/pkg/a.py")
    assert code == 0
    assert allowed["paths"] == ["src/pkg/a.py"]


def test_check_of_a_path_outside_every_claim_exits_8_out_of_scope_and_names_it(cli: Cli) -> None:
    claim = cli.open("src/**")["claim"]["id"]

    code, body = cli.json("claim", "check", claim, "README.md")
    text = cli("claim", "check", claim, "README.md")

    assert code == 8
    assert body["code"] == "out_of_scope"
    assert body["paths"] == ["README.md"]
    assert text.exit_code == 8
    assert "outside the claim: README.md" in text.stderr


def test_propose_then_accept_applies_a_serialize(cli: Cli) -> None:
    alice, bob, meeting = _pair(cli)

    proposed = cli(
        "meeting", "propose", meeting, "--as", bob, "--serialize", "--first", alice, "--then", bob
    )

    assert proposed.exit_code == 0, proposed.output
    state = _meeting(cli, meeting)["meeting"]
    assert state["status"] == "open"
    (proposal,) = state["proposals"]
    assert proposal["acceptedBy"] == [bob]
    assert proposal["resolution"] == {
        "type": "serialize", "first": alice, "then": bob, "affected": [alice, bob],
    }  # fmt: skip
    accept_command = f"detente meeting accept {meeting} {proposal['id']} --as {alice}"
    assert accept_command in proposed.stdout

    code, body = cli.json(*_argv(accept_command))

    assert code == 0, body
    assert body["meeting"]["status"] == "resolved"
    assert body["meeting"]["resolution"]["type"] == "serialize"
    assert body["meeting"]["proposals"][0]["status"] == "accepted"
    assert _claim(cli, alice)["status"] == "active"
    assert _claim(cli, bob)["status"] == "suspended"


def test_a_stale_expect_revision_exits_4_and_changes_nothing(cli: Cli) -> None:
    alice, bob, meeting = _pair(cli)
    before = _meeting(cli, meeting)["meeting"]

    code, body = cli.json(
        "meeting", "resolve", meeting, "--serialize", "--first", alice, "--then", bob,
        "--expect-revision", str(before["revision"] - 1),
    )  # fmt: skip
    proposed, _ = cli.json(
        "meeting", "propose", meeting, "--as", bob, "--join", f"{alice},{bob}",
        "--expect-revision", str(before["revision"] + 1),
    )  # fmt: skip

    assert code == 4
    assert body["code"] == "revision_conflict"
    assert body["actual"] == before["revision"]
    assert proposed == 4
    after = _meeting(cli, meeting)["meeting"]
    assert after["revision"] == before["revision"]
    assert after["status"] == "open"
    assert after["proposals"] == []
    assert _claim(cli, bob)["status"] == "negotiating"


def test_every_option_claim_open_prints_parses_as_a_meeting_command(cli: Cli) -> None:
    cli.open("src/**", agent="alice")
    opened = cli.open("src/pkg/a.py", agent="bob")
    meeting = opened["meeting"]["id"]
    commands = [o["command"] for o in opened["options"] if o["type"] != "withdraw"]
    assert len(commands) == 5

    # A revision nobody has: the command line and its resolution are accepted, then the
    # server refuses the stale revision (exit 4) -- a flag mismatch would exit 2.
    for command in commands:
        code, body = cli.json(*_argv(command), "--expect-revision", "99")
        assert code == 4, (command, body)

    assert _meeting(cli, meeting)["meeting"]["revision"] == opened["meeting"]["revision"]


def test_show_lists_participants_contested_targets_and_runnable_options(cli: Cli) -> None:
    alice, bob, meeting = _pair(cli)

    body = _meeting(cli, meeting)
    text = cli("meeting", "show", meeting)

    assert [(p["claimId"], p["agent"]["name"], p["status"]) for p in body["participants"]] == [
        (alice, "alice", "active"),
        (bob, "bob", "negotiating"),
    ]
    assert body["meeting"]["contestedTargets"][0]["target"] == "src/**"  # the held target
    assert body["deadline"]["passed"] is False
    assert body["meeting"]["arbitrators"] == []
    assert text.exit_code == 0
    assert "deadline     in " in text.stdout
    assert f"{bob}  bob  negotiating  src/pkg/a.py" in text.stdout
    serialize = next(o for o in body["options"] if o["type"] == "serialize")
    assert serialize["propose"].startswith(f"detente meeting propose {meeting} --as {bob} ")

    code, resolved = cli.json(*_argv(serialize["command"]))

    assert code == 0, resolved
    assert resolved["meeting"]["resolution"]["first"] == alice
    assert _meeting(cli, meeting)["options"] == []


def test_an_escalation_names_arbitrators_and_only_they_may_resolve(
    cli: Cli, repo: Path, git: Git
) -> None:
    (repo / "CODEOWNERS").write_text("src/ @lead\n")
    git(repo, "add", "CODEOWNERS")
    git(repo, "commit", "-q", "-m", "owners")
    alice, bob, meeting = _pair(cli)

    code, body = cli.json("meeting", "resolve", meeting, "--escalate", "--by", "carol")

    assert code == 0, body
    assert body["meeting"]["status"] == "escalated"
    assert {c["status"] for c in body["claims"]} == {"blocked"}
    shown = _meeting(cli, meeting)
    assert shown["meeting"]["arbitrators"] == ["@lead"]
    assert "human_arbitration" not in {o["type"] for o in shown["options"]}
    join = next(o for o in shown["options"] if o["type"] == "joint")
    assert join["command"].endswith("--by @lead")
    assert "arbitrators: @lead" in cli("meeting", "show", meeting).stdout

    refused, problem = cli.json("meeting", "resolve", meeting, "--join", f"{alice},{bob}")
    assert refused == 8
    assert problem["code"] == "forbidden"

    code, body = cli.json(*_argv(join["command"]))
    assert code == 0, body
    assert body["meeting"]["resolution"]["type"] == "joint"
    assert body["meeting"]["resolution"]["resolvedBy"] == "@lead"
    assert {c["status"] for c in body["claims"]} == {"active"}


def test_a_handoff_waits_for_the_recipient_to_accept_it_and_moves_only_what_it_asked_for(
    cli: Cli,
) -> None:
    alice, bob, meeting = _pair(cli)

    code, body = cli.json(
        "meeting", "resolve", meeting, "--handoff", "--from", alice, "--to", bob, "--by", "carol"
    )

    assert code == 0, body
    assert body["meeting"]["resolution"]["accepted"] is False
    assert _claim(cli, bob)["status"] == "negotiating"
    accept = f"detente meeting accept-handoff {meeting} --as {bob}"
    assert body["next"] == [accept]
    assert cli.json("meeting", "accept-handoff", meeting, "--as", alice)[0] == 8

    code, body = cli.json(*_argv(accept))

    assert code == 0, body
    assert body["meeting"]["resolution"]["accepted"] is True
    assert _claim(cli, bob)["paths"] == ["src/pkg/a.py"]
    assert _claim(cli, bob)["status"] == "active"
    sender = _claim(cli, alice)
    assert sender["status"] == "active"
    assert sender["paths"] == ["src/**"]
    assert sender["carveOuts"] == {"src/**": ["src/pkg/a.py"]}


def test_list_filters_by_status(cli: Cli) -> None:
    alice, bob, meeting = _pair(cli)

    assert [m["id"] for m in cli.json("meeting", "list", "--status", "open")[1]["meetings"]] == [
        meeting
    ]
    cli.json("meeting", "resolve", meeting, "--join", f"{alice},{bob}")

    assert cli.json("meeting", "list", "--status", "open")[1]["meetings"] == []
    resolved = cli.json("meeting", "list", "--status", "resolved")[1]["meetings"]
    assert [m["id"] for m in resolved] == [meeting]
    assert meeting in cli("meeting", "list").stdout
    assert cli.json("meeting", "list", "--status", "closed")[0] == 2


def test_resolution_flags_must_name_exactly_one_well_formed_resolution(cli: Cli) -> None:
    alice, bob, meeting = _pair(cli)

    cases = [
        [],
        ["--escalate", "--join", f"{alice},{bob}"],
        ["--split", alice],
        ["--serialize", "--first", alice],
        ["--handoff", "--to", bob],
        ["--join", alice],
    ]
    for flags in cases:
        code, body = cli.json("meeting", "resolve", meeting, *flags)
        assert (code, body["code"]) == (2, "validation_error"), flags

    assert _meeting(cli, meeting)["meeting"]["revision"] == 1


def test_an_unknown_meeting_exits_3(cli: Cli) -> None:
    code, body = cli.json("meeting", "show", "mtg_nope")

    assert code == 3
    assert body["code"] == "not_found"


def test_the_options_of_a_three_party_room_name_every_claim_involved() -> None:
    from detente.cli.views import negotiation_options

    claim = {"id": "clm_g", "paths": ["src/api/app.py", "README.md"]}
    overlaps = [
        {"claimId": "clm_e", "targets": [{"mine": "src/api/app.py", "theirs": "src/api/app.py"}]},
        {"claimId": "clm_f", "targets": [{"mine": "src/api/app.py", "theirs": "src/api/*.py"}]},
    ]
    meeting = {"id": "mtg_1", "options": ["split_ownership", "joint"]}

    commands = {o["type"]: o["command"] for o in negotiation_options(claim, overlaps, meeting)}

    assert commands["joint"].endswith("--join clm_e,clm_f,clm_g")
    split = commands["split_ownership"]
    assert "--split clm_g=README.md" in split
    assert "--split clm_e=src/api/app.py" in split and "--split clm_f='src/api/*.py'" in split


def test_the_serialize_and_handoff_options_name_the_holder_not_another_waiter() -> None:
    from detente.cli.views import negotiation_options

    claim = {"id": "clm_p2", "paths": ["lib/role.py"]}
    target = [{"mine": "lib/role.py", "theirs": "lib/role.py"}]
    overlaps = [
        {"claimId": "clm_a3", "theirStatus": "negotiating", "targets": target},
        {"claimId": "clm_z1", "theirStatus": "active", "targets": target},
    ]
    meeting = {"id": "mtg_1", "options": ["serialize", "handoff"]}

    commands = {o["type"]: o["command"] for o in negotiation_options(claim, overlaps, meeting)}

    assert commands["serialize"].endswith("--serialize --first clm_z1 --then clm_p2")
    assert commands["handoff"].endswith("--handoff --from clm_z1 --to clm_p2")


def test_meeting_open_gives_a_potential_overlap_a_room_and_both_stay_active(cli: Cli) -> None:
    one = cli.open("newpkg/*.py", agent="one")["claim"]
    two = cli.open("newpkg/**/core.py", agent="two")["claim"]
    assert two["status"] == "active"

    code, body = cli.json("meeting", "open", two["id"], "--with", one["id"], "--reason", "core.py")

    assert code == 0, body
    assert body["meeting"]["status"] == "open"
    assert body["meeting"]["requestedBy"] == two["id"]
    assert set(body["meeting"]["participants"]) == {one["id"], two["id"]}
    assert {c["status"] for c in body["claims"]} == {"active"}
    again, problem = cli.json("meeting", "open", one["id"], "--with", two["id"])
    assert again != 0 and problem["code"] == "invalid_transition"


def test_claim_open_prints_the_command_opening_a_meeting_over_a_potential_overlap(
    cli: Cli,
) -> None:
    one = cli.open("newpkg/*.py", agent="one")["claim"]

    out = cli("claim", "open", "-o", "two", "-p", "newpkg/**/core.py", "--agent", "two").stdout

    assert "potential" in out
    assert f"--with {one['id']}" in out and "detente meeting open" in out
