"""The harness hooks' pre-commit check and session registration without the request
models: the same answers and refusals as the camelCase bodies validated by
``PreCommitIn`` and ``AgentIn``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from detente.client.connect import open_local
from detente.client.inprocess import InProcessClient
from detente.client.seeds import claim_seed
from detente.errors import ValidationError


def test_the_typed_check_answers_as_the_validated_body_does(repo: Path) -> None:
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    client = open_local(repo)
    assert isinstance(client, InProcessClient)
    with client:
        name = client.repo_name or ""
        mine = client.open_claim(
            claim_seed(
                repo=name,
                objective="mine",
                agent="a",
                base_commit=head,
                paths=["src/a.py"],
                symbols=["src/s.py::alpha"],
            )
        )["claim"]["id"]
        client.open_claim(
            claim_seed(
                repo=name,
                objective="theirs",
                agent="b",
                base_commit=head,
                paths=["src/b.py"],
                symbols=["src/s.py::beta"],
            )
        )
        cases = [
            (mine, ["src/a.py"], None),
            (mine, ["src/b.py", "src/c.py"], None),
            (None, ["src/b.py"], None),
            (
                mine,
                ["src/s.py"],
                [{"path": "src/s.py", "symbols": ["src/s.py::alpha"], "outside": False}],
            ),
            (
                mine,
                ["src/s.py"],
                [{"path": "src/s.py", "symbols": ["src/s.py::beta"], "outside": False}],
            ),
        ]
        typed = [client.check_commit_typed(name, c, p, edits=e) for c, p, e in cases]
        validated = [client.pre_commit(name, c, p, edits=e) for c, p, e in cases]
        with pytest.raises(ValidationError):
            client.check_commit_typed(name, mine, [])
        with pytest.raises(ValidationError):
            client.check_commit_typed(name, mine, ["src/\ud800.py"])

    assert typed == validated
    assert [t["ok"] for t in typed] == [True, False, False, True, False]


def test_the_typed_registration_answers_as_the_validated_body_does(repo: Path) -> None:
    client = open_local(repo)
    assert isinstance(client, InProcessClient)
    body = {"sessionId": "claude-s1", "agentName": "claude", "worktree": str(repo)}
    with client:
        typed = client.register_agent_typed({**body, "ttlSeconds": 600})["agent"]
        validated = client.register_agent({**body, "ttlSeconds": 600})["agent"]
        refusals = []
        for bad in (
            {**body, "ttlSeconds": "600"},
            {**body, "ttlSeconds": 0},
            {**body, "sessionId": "no spaces"},
            {**body, "color": "red"},
            {**body, "agentName": "\ud800"},
        ):
            for call in (client.register_agent_typed, client.register_agent):
                with pytest.raises(ValidationError) as refused:
                    call(bad)
                refusals.append(refused.value.field)

    assert {k: typed[k] for k in body} == {k: validated[k] for k in body}
    assert typed["status"] == validated["status"] == "active"
    assert refusals[0::2] == refusals[1::2]  # the same field named, typed or validated
    assert refusals[0::2] == ["ttlSeconds", "ttlSeconds", "sessionId", "color", "agentName"]
