"""The claim endpoints over real HTTP (uvicorn on loopback, SQLite store)."""

from __future__ import annotations

import threading

import httpx
import pytest

from detente.clock import FakeClock

from support import claim_body


def test_opening_a_claim_returns_201_with_the_claim_overlaps_and_no_meeting(
    http: httpx.Client,
) -> None:
    r = http.post("/v1/claims", json=claim_body("src/app.py"))
    assert r.status_code == 201
    body = r.json()
    assert body["claim"]["status"] == "active"
    assert body["claim"]["lease"]["revision"] == 1
    assert body["claim"]["fencingToken"] == 1
    assert body["overlaps"] == [] and body["meeting"] is None


def test_an_overlapping_claim_negotiates_in_a_meeting_with_a_witness(http: httpx.Client) -> None:
    a = http.post("/v1/claims", json=claim_body("src/**")).json()["claim"]
    r = http.post("/v1/claims", json=claim_body("src/app.rs", agent="bob"))
    body = r.json()
    assert r.status_code == 201
    assert body["claim"]["status"] == "negotiating"
    [overlap] = body["overlaps"]
    assert overlap["claimId"] == a["id"] and overlap["severity"] == "blocking"
    assert overlap["kind"] == "path"
    assert overlap["targets"] == [
        {"mine": "src/app.rs", "theirs": "src/**", "witness": "src/app.rs"}
    ]
    assert body["meeting"]["status"] == "open"
    assert set(body["meeting"]["participants"]) == {a["id"], body["claim"]["id"]}


def test_errors_are_problem_json_with_stable_codes(http: httpx.Client) -> None:
    r = http.post("/v1/claims", json=claim_body("../escape"))
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["code"] == "validation_error" and r.json()["field"] == "paths[0]"
    r = http.post("/v1/claims", json={**claim_body("a.py"), "unknownField": 1})
    assert r.status_code == 422 and r.json()["code"] == "validation_error"
    assert r.json()["field"] == "unknownField"
    r = http.get("/v1/claims/clm_missing")
    assert r.status_code == 404 and r.json()["code"] == "not_found"
    assert http.get("/v1/claims").json()["claims"] == []


def test_a_stale_revision_is_409_with_current_expected_actual_and_event_ids(
    http: httpx.Client,
) -> None:
    claim = http.post("/v1/claims", json=claim_body("a.py")).json()["claim"]
    r = http.post(
        f"/v1/claims/{claim['id']}/renew",
        json={
            "expectedLeaseRevision": 1,
            "expectedClaimRevision": claim["revision"] + 5,
            "ttlSeconds": 60,
        },
    )
    assert r.status_code == 409
    problem = r.json()
    assert problem["code"] == "revision_conflict"
    assert problem["expected"] == claim["revision"] + 5 and problem["actual"] == claim["revision"]
    assert problem["current"]["id"] == claim["id"] and problem["eventIds"]


def test_renew_after_the_deadline_is_lease_expired_and_the_claim_is_expired(
    http: httpx.Client, clock: FakeClock
) -> None:
    claim = http.post("/v1/claims", json=claim_body("a.py", ttl=10)).json()["claim"]
    clock.advance(10)
    r = http.post(
        f"/v1/claims/{claim['id']}/renew",
        json={
            "expectedLeaseRevision": 1,
            "expectedClaimRevision": claim["revision"],
            "ttlSeconds": 60,
        },
    )
    assert r.status_code == 409 and r.json()["code"] == "lease_expired"
    assert http.get(f"/v1/claims/{claim['id']}").json()["claim"]["status"] == "expired"


def test_scope_change_suspend_resume_and_abandon_round_trip(http: httpx.Client) -> None:
    c = http.post("/v1/claims", json=claim_body("a.py")).json()["claim"]
    r = http.post(
        f"/v1/claims/{c['id']}/scope-change",
        json={"expectedClaimRevision": c["revision"], "addPaths": ["b/**"]},
    )
    c = r.json()["claim"]
    assert r.status_code == 200 and c["paths"] == ["a.py", "b/**"]
    c = http.post(
        f"/v1/claims/{c['id']}/suspend", json={"expectedClaimRevision": c["revision"]}
    ).json()["claim"]
    assert c["status"] == "suspended"
    c = http.post(
        f"/v1/claims/{c['id']}/resume", json={"expectedClaimRevision": c["revision"]}
    ).json()["claim"]
    assert c["status"] == "active"
    r = http.post(
        f"/v1/claims/{c['id']}/abandon",
        json={
            "expectedClaimRevision": c["revision"],
            "headCommit": "b" * 40,
            "diffSummary": {"files": ["a.py"], "insertions": 3, "deletions": 1},
        },
    )
    assert r.json()["claim"]["status"] == "abandoned"
    assert r.json()["claim"]["abandonment"]["diffSummary"]["insertions"] == 3


def test_complete_without_an_expected_base_ref_is_a_validation_error(http: httpx.Client) -> None:
    c = http.post("/v1/claims", json=claim_body("a.py")).json()["claim"]
    body = {"expectedClaimRevision": c["revision"], "fencingToken": c["fencingToken"]}
    r = http.post(f"/v1/claims/{c['id']}/complete", json=body)
    assert r.status_code == 422 and r.json()["code"] == "validation_error"
    assert http.get(f"/v1/claims/{c['id']}").json()["claim"]["status"] == "active"


def test_claims_are_filtered_by_status_path_and_agent(http: httpx.Client) -> None:
    http.post("/v1/claims", json=claim_body("lib/**", agent="alice"))
    http.post("/v1/claims", json=claim_body("docs/x.md", agent="bob"))
    assert [
        c["agent"]["id"]
        for c in http.get("/v1/claims", params={"path": "lib/a/b.py"}).json()["claims"]
    ] == ["alice"]
    assert [
        c["paths"] for c in http.get("/v1/claims", params={"agent": "bob"}).json()["claims"]
    ] == [["docs/x.md"]]
    assert http.get("/v1/claims", params={"status": "bogus"}).json()["code"] == "validation_error"


@pytest.mark.slow
def test_two_clients_racing_for_one_file_200_times_leave_exactly_one_active_each_time(
    live: str,
) -> None:
    clients = [httpx.Client(base_url=live, timeout=30) for _ in range(2)]
    try:
        for round_no in range(200):
            barrier = threading.Barrier(2)
            statuses: list[str] = []

            def race(
                i: int,
                n: int = round_no,
                b: threading.Barrier = barrier,
                out: list[str] = statuses,
            ) -> None:
                b.wait(timeout=10)
                r = clients[i].post("/v1/claims", json=claim_body(f"hot/{n}.py", agent=f"agent{i}"))
                out.append(r.json()["claim"]["status"])

            threads = [threading.Thread(target=race, args=(i,)) for i in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=30)
            assert sorted(statuses) == ["active", "negotiating"], f"round {round_no}: {statuses}"
    finally:
        for c in clients:
            c.close()


def test_repos_openapi_and_audit_endpoints_answer(http: httpx.Client) -> None:
    assert http.get("/v1/repos").json()["repos"][0]["name"] == "demo"
    assert "/v1/claims" in http.get("/openapi.json").json()["paths"]
    http.post("/v1/claims", json=claim_body("a.py"))
    audit = http.get("/v1/audit/verify").json()
    assert audit["ok"] is True and audit["events"] == 2 and len(audit["headHash"]) == 64


def test_hostile_input_is_refused_cleanly(http: httpx.Client) -> None:
    r = http.post(
        "/v1/claims",
        content=b'{"repo": "demo", "objective"',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422 and r.json()["field"] is None
    assert "not valid JSON" in r.json()["detail"]
    r = http.post("/v1/claims", json=claim_body("a.py", objective="x\x1b[2Jy"))
    assert r.status_code == 422 and r.json()["field"] == "objective"
    r = http.post("/v1/claims", json={**claim_body("a.py"), "repo": "nope", "baseCommit": None})
    assert r.status_code == 422 and r.json()["field"] == "repo"
    r = http.get("/v1/events", params={"since": 2**63})
    assert r.status_code == 422 and r.json()["code"] == "validation_error"
    assert http.get("/v1/claims").json()["claims"] == []


def test_a_resolution_field_its_type_does_not_take_is_422_and_the_meeting_stays_open(
    http: httpx.Client,
) -> None:
    a = http.post("/v1/claims", json=claim_body("src/**")).json()["claim"]
    opened = http.post("/v1/claims", json=claim_body("src/app.rs", agent="bob")).json()
    meeting = opened["meeting"]
    body = {
        "expectedMeetingRevision": meeting["revision"],
        "resolution": {
            "type": "serialize",
            "first": a["id"],
            "then": opened["claim"]["id"],
            "thne": a["id"],
        },
    }
    r = http.post(f"/v1/meetings/{meeting['id']}/resolve", json=body)
    assert r.status_code == 422 and r.json()["code"] == "validation_error"
    assert r.json()["field"] == "resolution.thne"
    after = http.get(f"/v1/meetings/{meeting['id']}").json()["meeting"]
    assert after["status"] == "open" and after["revision"] == meeting["revision"]


def test_a_resolution_naming_a_claim_that_no_longer_holds_is_409_and_changes_nothing(
    http: httpx.Client,
) -> None:
    a = http.post("/v1/claims", json=claim_body("src/**")).json()["claim"]
    b = http.post("/v1/claims", json=claim_body("src/app.rs", agent="bob")).json()
    c = http.post("/v1/claims", json=claim_body("src/app.rs", agent="carol")).json()["claim"]
    room = b["meeting"]["id"]
    gone = http.post(
        f"/v1/claims/{b['claim']['id']}/abandon",
        json={"expectedClaimRevision": b["claim"]["revision"]},
    )
    assert gone.status_code == 200
    meeting = http.get(f"/v1/meetings/{room}").json()["meeting"]
    assert meeting["status"] == "open"  # a and c still contest src/app.rs
    body = {
        "expectedMeetingRevision": meeting["revision"],
        "resolution": {"type": "serialize", "first": a["id"], "then": b["claim"]["id"]},
    }
    r = http.post(f"/v1/meetings/{room}/resolve", json=body)
    assert r.status_code == 409 and r.json()["code"] == "invalid_transition"
    assert r.json()["claimId"] == b["claim"]["id"]
    after = http.get(f"/v1/meetings/{room}").json()["meeting"]
    assert after["status"] == "open" and after["revision"] == meeting["revision"]
    assert http.get(f"/v1/claims/{c['id']}").json()["claim"]["status"] == "negotiating"
