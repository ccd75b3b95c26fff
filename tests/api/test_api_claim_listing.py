"""``GET /v1/claims`` written a chunk of claims at a time, byte for byte FastAPI's answer."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from detente.api import claim_listing
from detente.operations import wire
from detente.operations.claims import list_claims
from detente.service import Service

from support import claim_body


def _declared_answer(service: Service, **query: object) -> bytes:
    """What FastAPI answers when a route returns the listing as its declared record."""
    app = FastAPI()

    @app.get("/claims")
    def listing() -> wire.ClaimList:
        return list_claims(service, **query)  # type: ignore[misc]

    transport = httpx.ASGITransport(app=app)

    async def get() -> bytes:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return (await client.get("/claims")).content

    import asyncio

    return asyncio.run(get())


def _open(http: httpx.Client, count: int) -> list[str]:
    ids = []
    for i in range(count):
        body = claim_body(f"src/p{i}/**", agent=f"agent-{i % 3}")
        body["objective"] = f'edit p{i} \u00e9 "quoted" </script>'
        r = http.post("/v1/claims", json=body)
        assert r.status_code == 201, r.text
        ids.append(r.json()["claim"]["id"])
    return ids


def test_a_listing_longer_than_a_chunk_is_streamed_with_the_bytes_fastapi_would_answer(
    http: httpx.Client, sqlite_service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claim_listing, "CHUNK", 2)
    opened = _open(http, 7)

    r = http.get("/v1/claims")

    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.headers.get("transfer-encoding") == "chunked"  # written chunk by chunk
    assert "content-length" not in r.headers
    assert [c["id"] for c in r.json()["claims"]] == opened
    assert r.content == _declared_answer(sqlite_service)


@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_every_page_size_answers_the_declared_bytes_and_cursor(
    http: httpx.Client, sqlite_service: Service, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(claim_listing, "CHUNK", 2)
    _open(http, 5)

    r = http.get("/v1/claims", params={"limit": limit, "status": "active"})

    assert r.status_code == 200
    assert r.content == _declared_answer(sqlite_service, limit=limit, status="active")
    assert (r.json()["nextCursor"] is None) == (limit >= 5)


def test_an_empty_listing_and_a_bad_query_answer_before_any_body_is_written(
    http: httpx.Client, sqlite_service: Service
) -> None:
    empty = http.get("/v1/claims")
    bad = http.get("/v1/claims", params={"cursor": "not-a-cursor"})
    unknown = http.get("/v1/claims", params={"status": "sleeping"})

    assert empty.content == _declared_answer(sqlite_service) == b'{"claims":[],"nextCursor":null}'
    assert empty.headers["content-length"] == str(len(empty.content))
    assert bad.status_code == 422 and bad.json()["code"] == "validation_error"
    assert unknown.status_code == 422 and unknown.json()["field"] == "status"
