"""The agent registry and readiness endpoints over real HTTP (uvicorn on loopback, SQLite)."""

from __future__ import annotations

import httpx

from detente.clock import FakeClock

from support import claim_body


def agent_body(session: str, **extra: object) -> dict[str, object]:
    body: dict[str, object] = {
        "sessionId": session,
        "agentName": "claude-code",
        "branch": "feat/docs",
        "worktree": "/srv/agents/docs",
        "intent": "rewrite the docs",
        "ttlSeconds": 60,
    }
    body.update(extra)
    return body


def test_registering_returns_201_and_the_list_shows_the_session_active(
    http: httpx.Client,
) -> None:
    r = http.post("/v1/agents", json=agent_body("s1"))
    assert r.status_code == 201
    agent = r.json()["agent"]
    assert agent["sessionId"] == "s1" and agent["status"] == "active"
    assert agent["expiresAt"] == "2026-01-01T00:01:00.000000Z"
    [listed] = http.get("/v1/agents", params={"repo": "demo"}).json()["agents"]
    assert {k: listed[k] for k in ("sessionId", "agentName", "branch", "worktree", "intent")} == {
        "sessionId": "s1",
        "agentName": "claude-code",
        "branch": "feat/docs",
        "worktree": "/srv/agents/docs",
        "intent": "rewrite the docs",
    }


def test_a_session_past_its_ttl_is_departed_until_it_registers_again(
    http: httpx.Client, clock: FakeClock
) -> None:
    http.post("/v1/agents", json=agent_body("s1"))
    clock.advance(61)
    assert http.get("/v1/agents/s1").json()["agent"]["status"] == "departed"
    again = http.post("/v1/agents", json=agent_body("s1", intent="second pass"))
    assert again.status_code == 201
    assert again.json()["agent"]["status"] == "active"
    assert again.json()["agent"]["revision"] == 2


def test_readiness_is_caution_with_the_overlapping_claim_then_ready_after_abandon(
    http: httpx.Client,
) -> None:
    body = claim_body("docs/**", agent="alice")
    body["agent"] = {"id": "alice", "name": "alice", "sessionId": "s1"}
    claim = http.post("/v1/claims", json={**body, "advisory": True}).json()["claim"]
    r = http.post("/v1/readiness", json={"sessionId": "s2", "paths": ["docs/foo.md"]})
    assert r.status_code == 200
    assert r.json()["readiness"] == "caution"
    [entry] = r.json()["overlappingClaims"]
    assert entry["claimId"] == claim["id"] and entry["sessionId"] == "s1"
    assert entry["agentName"] == "alice" and entry["paths"] == ["docs/**"]
    assert entry["reason"] == claim["objective"]
    http.post(
        f"/v1/claims/{claim['id']}/abandon", json={"expectedClaimRevision": claim["revision"]}
    )
    r = http.post("/v1/readiness", json={"sessionId": "s2", "paths": ["docs/foo.md"]})
    assert r.json() == {"readiness": "ready", "overlappingClaims": []}


def test_bad_bodies_are_validation_problems_naming_the_field(http: httpx.Client) -> None:
    for path, body, field in (
        ("/v1/agents", agent_body("has space"), "sessionId"),
        ("/v1/agents", agent_body("s1", ttlSeconds="60"), "ttlSeconds"),
        ("/v1/readiness", {"sessionId": "s1", "paths": []}, "paths"),
        ("/v1/readiness", {"sessionId": "s1", "paths": ["/abs"]}, "paths[0]"),
    ):
        r = http.post(path, json=body)
        assert r.status_code == 422, body
        assert r.headers["content-type"].startswith("application/problem+json")
        assert r.json()["code"] == "validation_error" and r.json()["field"] == field
    r = http.get("/v1/agents/nobody")
    assert r.status_code == 404 and r.json()["code"] == "not_found"
