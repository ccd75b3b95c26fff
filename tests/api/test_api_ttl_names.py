"""One name for a lease's length everywhere: ``ttlSeconds``, with ``leaseTtlSeconds`` an
alias (and the reverse on the claim seed, whose contract name is ``leaseTtlSeconds``)."""

from __future__ import annotations

import httpx

from support import claim_body


def _claim(http: httpx.Client, **ttl: int) -> dict[str, object]:
    body = claim_body("docs/**")
    del body["leaseTtlSeconds"]
    r = http.post("/v1/claims", json={**body, **ttl})
    assert r.status_code == 201, r.text
    claim: dict[str, object] = r.json()["claim"]
    return claim


def test_a_claim_takes_its_lease_length_as_ttl_seconds_or_lease_ttl_seconds(
    http: httpx.Client,
) -> None:
    assert _claim(http, ttlSeconds=120)["lease"]["ttlSeconds"] == 120  # type: ignore[index]
    other = claim_body("src/**", agent="bob")
    r = http.post("/v1/claims", json={**other, "leaseTtlSeconds": 90})
    assert r.json()["claim"]["lease"]["ttlSeconds"] == 90


def test_renew_and_agents_take_lease_ttl_seconds_as_an_alias(http: httpx.Client) -> None:
    claim = _claim(http, leaseTtlSeconds=60)
    r = http.post(
        f"/v1/claims/{claim['id']}/renew",
        json={
            "expectedLeaseRevision": claim["lease"]["revision"],  # type: ignore[index]
            "expectedClaimRevision": claim["revision"],
            "leaseTtlSeconds": 300,
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["claim"]["lease"]["ttlSeconds"] == 300
    agent = {"sessionId": "s1", "agentName": "a", "intent": "docs", "leaseTtlSeconds": 45}
    r = http.post("/v1/agents", json=agent)
    assert r.status_code == 201, r.text
    assert r.json()["agent"]["expiresAt"] == "2026-01-01T00:00:45.000000Z"


def test_both_names_at_once_are_a_422_naming_the_field_and_change_nothing(
    http: httpx.Client,
) -> None:
    body = {**claim_body("docs/**"), "ttlSeconds": 30}
    r = http.post("/v1/claims", json=body)
    assert r.status_code == 422
    assert r.json()["field"] in ("ttlSeconds", "leaseTtlSeconds")
    assert http.get("/v1/claims", params={"repo": "demo"}).json()["claims"] == []
