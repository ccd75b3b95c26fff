"""The whole judgement of an edit in one call (``check_edit``, ``POST
/v1/hooks/edit-check``), in process on a real repository and store: the claim the
session works under, allow or deny by the one authority rule, the holder with its
objective and lease, the room both claims sit in, the files no claim holds, and the
ready-to-run options; the typed call answers as the validated body does."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from detente.client.connect import open_local
from detente.client.inprocess import InProcessClient
from detente.client.seeds import claim_seed
from detente.errors import NotFoundError, ValidationError


def _head(repo: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def _open(client: Any, repo: Path, agent: str, paths: list[str], **more: Any) -> dict[str, Any]:
    view = client.open_claim(
        claim_seed(
            repo=client.repo_name or "",
            objective=f"{agent} reworks {paths[0]}",
            agent=agent,
            base_commit=_head(repo),
            paths=paths,
            ttl=3600,
            **more,
        )
    )
    return dict(view)


@pytest.fixture
def client(repo: Path) -> Any:
    local = open_local(repo)
    assert isinstance(local, InProcessClient)
    with local:
        yield local


def test_the_sessions_own_file_is_allowed_under_the_claim_its_session_opened(
    client: Any, repo: Path
) -> None:
    mine = _open(client, repo, "alice", ["src/own.py"], session="claude-S1")["claim"]
    _open(client, repo, "bob", ["src/held.py"])

    answer = client.check_edit(client.repo_name, ["src/own.py"], session_id="claude-S1")

    assert answer["decision"] == "allow"
    assert answer["claim"]["id"] == mine["id"]
    assert answer["unclaimed"] == [] and answer["holders"] == [] and answer["options"] == []


def test_another_claims_file_is_denied_with_the_holder_its_lease_and_the_options(
    client: Any, repo: Path
) -> None:
    mine = _open(client, repo, "alice", ["src/own.py"], session="claude-S1")["claim"]
    theirs = _open(client, repo, "bob", ["src/held.py"])["claim"]

    answer = client.check_edit(client.repo_name, ["src/held.py"], session_id="claude-S1")

    assert answer["decision"] == "deny"
    [holder] = answer["holders"]
    assert holder["id"] == theirs["id"] and holder["objective"] == "bob reworks src/held.py"
    assert holder["lease"]["expiresAt"] == theirs["lease"]["expiresAt"]
    assert answer["check"]["findings"][0]["kind"] == "held"
    assert [o["action"] for o in answer["options"]] == ["wait", "claim", "elsewhere"]
    assert answer["options"][1]["command"] == f"detente claim scope add {mine['id']} -p src/held.py"


def test_a_room_both_claims_sit_in_is_named_with_split_and_handoff_commands(
    client: Any, repo: Path
) -> None:
    theirs = _open(client, repo, "bob", ["src/held.py"])["claim"]
    waiting = _open(client, repo, "alice", ["src/held.py"], session="claude-S1")
    room = waiting["meeting"]["id"]

    answer = client.check_edit(client.repo_name, ["src/held.py"], session_id="claude-S1")

    mine = waiting["claim"]["id"]
    assert answer["decision"] == "deny" and answer["rooms"] == [room]
    commands = {o["action"]: o["command"] for o in answer["options"]}
    assert (
        commands["split"]
        == f"detente meeting propose {room} --as {mine} --split {mine}=src/held.py"
    )
    assert commands["handoff"] == (
        f"detente meeting propose {room} --as {mine} --handoff --from {theirs['id']} --to {mine}"
    )


def test_files_no_claim_holds_are_listed_for_the_callers_policy(client: Any, repo: Path) -> None:
    _open(client, repo, "alice", ["src/own.py"], session="claude-S1")

    mine = client.check_edit(client.repo_name, ["src/free.py"], session_id="claude-S1")
    nobody = client.check_edit(client.repo_name, ["src/free.py"], session_id="claude-S9")

    assert mine["decision"] == "allow" and mine["unclaimed"] == ["src/free.py"]
    assert nobody["claim"] is None and nobody["unclaimed"] == ["src/free.py"]
    assert nobody["options"] == [
        {"action": "claim", "command": 'detente claim open -o "..." -p src/free.py'}
    ]


def test_a_second_harness_session_never_works_under_the_firsts_claim_in_one_checkout(
    client: Any, repo: Path
) -> None:
    first = _open(client, repo, "alice", ["src/own.py"], session="claude-S1")["claim"]
    plain = _open(client, repo, "carol", ["src/cli.py"], session="carols-shell")["claim"]

    other = client.check_edit(client.repo_name, ["src/own.py"], session_id="claude-S2")
    by_claim = client.check_edit(client.repo_name, ["src/own.py"], claim_id=first["id"])

    assert other["decision"] == "deny" and other["claim"] is None
    assert by_claim["decision"] == "allow" and by_claim["claim"]["id"] == first["id"]
    assert plain["id"] != first["id"]


def test_symbols_matter_when_another_claim_holds_a_symbol_of_the_file(
    client: Any, repo: Path
) -> None:
    _open(client, repo, "alice", ["src/a.py"], session="claude-S1", symbols=["src/s.py::alpha"])
    _open(client, repo, "bob", ["src/b.py"], symbols=["src/s.py::beta"])
    alpha = [{"path": "src/s.py", "symbols": ["src/s.py::alpha"], "outside": False}]

    whole = client.check_edit(client.repo_name, ["src/s.py"], session_id="claude-S1")
    inside = client.check_edit(client.repo_name, ["src/s.py"], session_id="claude-S1", edits=alpha)
    plain = client.check_edit(client.repo_name, ["src/a.py"], session_id="claude-S1")

    assert whole["decision"] == "deny" and whole["symbolsMatter"] is True
    assert inside["decision"] == "allow"
    assert plain["decision"] == "allow"


def test_the_typed_call_answers_as_the_validated_body_and_refuses_the_same_input(
    client: Any, repo: Path
) -> None:
    _open(client, repo, "alice", ["src/own.py"], session="claude-S1")
    _open(client, repo, "bob", ["src/held.py"])
    name = client.repo_name
    cases = [["src/own.py"], ["src/held.py"], ["src/free.py", "src/own.py"]]

    typed = [
        client.check_edit_typed(name, p, session_id="claude-S1", worktree=str(repo), branch="main")
        for p in cases
    ]
    validated = [
        client.check_edit(name, p, session_id="claude-S1", worktree=str(repo), branch="main")
        for p in cases
    ]

    assert typed == validated
    assert [t["decision"] for t in typed] == ["allow", "deny", "allow"]
    for call in (client.check_edit_typed, client.check_edit):
        with pytest.raises(ValidationError):
            call(name, [])
        with pytest.raises(ValidationError):
            call(name, ["../outside.py"])
        with pytest.raises(NotFoundError):
            call(name, ["src/own.py"], claim_id="clm_nope")
