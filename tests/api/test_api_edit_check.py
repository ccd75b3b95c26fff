"""``POST /v1/hooks/edit-check`` over real HTTP (uvicorn on loopback, SQLite): the whole
judgement of an edit in one request, declared in the OpenAPI document; bad input is a
``validation_error`` that changes nothing."""

from __future__ import annotations

import shlex
from typing import Any

import httpx

from support import claim_body


def _open(http: httpx.Client, path: str, agent: str, session: str | None = None) -> dict[str, Any]:
    body = claim_body(path, agent=agent)
    if session:
        body["agent"] = {"id": agent, "name": agent, "sessionId": session}
    r = http.post("/v1/claims", json=body)
    assert r.status_code == 201, r.text
    return dict(r.json()["claim"])


def test_one_request_answers_the_holder_its_lease_and_the_options(http: httpx.Client) -> None:
    mine = _open(http, "src/own.py", "alice", session="claude-S1")
    theirs = _open(http, "src/held.py", "bob")
    body = {"repo": "demo", "paths": ["src/held.py"], "sessionId": "claude-S1"}

    r = http.post("/v1/hooks/edit-check", json=body)

    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["decision"] == "deny" and answer["claim"]["id"] == mine["id"]
    assert [h["id"] for h in answer["holders"]] == [theirs["id"]]
    assert answer["holders"][0]["lease"]["expiresAt"] == theirs["lease"]["expiresAt"]
    assert answer["check"]["findings"][0] == {
        "path": "src/held.py",
        "kind": "held",
        "claimId": theirs["id"],
        "agent": "bob",
    }
    assert answer["options"][0]["command"] == f"detente claim status {theirs['id']}"
    assert answer["symbolsMatter"] is False and answer["rooms"] == []


def test_the_sessions_own_file_is_allowed(http: httpx.Client) -> None:
    _open(http, "src/own.py", "alice", session="claude-S1")

    r = http.post(
        "/v1/hooks/edit-check",
        json={"repo": "demo", "paths": ["src/own.py", "src/new.py"], "sessionId": "claude-S1"},
    )

    assert r.status_code == 200
    assert r.json()["decision"] == "allow" and r.json()["unclaimed"] == ["src/new.py"]


def test_a_suggested_command_names_a_path_with_shell_characters_as_one_word(
    http: httpx.Client,
) -> None:
    mine = _open(http, "src/own.py", "alice", session="claude-S2")
    odd = "src/x;touch pwned $(id).py"
    for session, prefix in ((None, ["claim", "open"]), ("claude-S2", ["claim", "scope", "add"])):
        body = {"repo": "demo", "paths": [odd], **({"sessionId": session} if session else {})}

        r = http.post("/v1/hooks/edit-check", json=body)

        assert r.status_code == 200, r.text
        [claim] = [o for o in r.json()["options"] if o["action"] == "claim"]
        words = shlex.split(claim["command"])
        assert words[1 : 1 + len(prefix)] == prefix and words[-2:] == ["-p", odd], words
    assert mine["paths"] == ["src/own.py"]


def test_bad_input_is_a_validation_error(http: httpx.Client) -> None:
    before = http.get("/v1/events", params={"repo": "demo"}).json()["events"]
    for body in (
        {"repo": "demo", "paths": []},
        {"repo": "demo", "paths": ["../etc/passwd"]},
        {"repo": "demo", "paths": ["a.py"], "unknown": 1},
        {"repo": "nope", "paths": ["a.py"]},
    ):
        r = http.post("/v1/hooks/edit-check", json=body)
        assert r.status_code in (400, 422), (body, r.text)
        assert r.json()["code"] == "validation_error"
    assert http.get("/v1/events", params={"repo": "demo"}).json()["events"] == before


def test_the_route_is_in_the_openapi_document(http: httpx.Client) -> None:
    doc = http.get("/openapi.json").json()

    post = doc["paths"]["/v1/hooks/edit-check"]["post"]

    assert post["operationId"] == "check_edit"
    assert "EditCheck" in str(post["responses"]["200"])
