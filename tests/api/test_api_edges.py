"""Every edge of the HTTP API answers problem+json: routing, bodies, limits, retries, bugs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.types import Message

from api.conftest import running
from detente.api.app import create_app
from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import claim_body, counting_ids

PROBLEM = "application/problem+json"


def _problem(r: httpx.Response, status: int, code: str) -> dict[str, object]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["code"] == code and body["status"] == status and body["detail"]
    return dict(body)


def test_an_unknown_route_is_a_not_found_problem(http: httpx.Client) -> None:
    body = _problem(http.get("/v1/nothing-here"), 404, "not_found")
    assert "/v1/nothing-here" in str(body["detail"])


def test_a_wrong_method_is_a_method_not_allowed_problem_with_allow(http: httpx.Client) -> None:
    r = http.delete("/v1/claims")
    _problem(r, 405, "method_not_allowed")
    assert r.headers["allow"]  # the methods the route does take


def test_a_body_that_is_not_utf8_is_a_validation_problem(http: httpx.Client) -> None:
    r = http.post(
        "/v1/claims", content=b'{"repo": "\xff\xfe"}', headers={"content-type": "application/json"}
    )
    assert "UTF-8" in str(_problem(r, 422, "validation_error")["detail"])


def test_a_body_nested_a_hundred_thousand_deep_is_a_validation_problem(
    http: httpx.Client,
) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    r = http.post("/v1/claims", content=deep, headers={"content-type": "application/json"})
    assert "deeply" in str(_problem(r, 422, "validation_error")["detail"])
    assert http.get("/healthz").json()["ok"] is True


def test_a_truncated_json_body_is_a_validation_problem(http: httpx.Client) -> None:
    r = http.post("/v1/claims", content=b'{"repo":', headers={"content-type": "application/json"})
    assert "not valid JSON" in str(_problem(r, 422, "validation_error")["detail"])


@pytest.fixture
def small_limit(tmp_path: Path, clock: FakeClock) -> Iterator[str]:
    service = Service(
        SqliteStore(tmp_path / "d.db"), clock, [RepoConfig("demo")], ids=counting_ids()
    )
    with running(service, max_body_bytes=4096) as base:
        yield base


def test_a_body_over_the_limit_is_refused_from_its_content_length(small_limit: str) -> None:
    with httpx.Client(base_url=small_limit, timeout=10) as http:
        big = json.dumps(claim_body("a.py", objective="x" * 5000)).encode()
        body = _problem(
            http.post("/v1/claims", content=big, headers={"content-type": "application/json"}),
            413,
            "payload_too_large",
        )
        assert "4096" in str(body["detail"])
        assert http.get("/v1/claims").json()["claims"] == []
        # Under the limit the same request works.
        assert http.post("/v1/claims", json=claim_body("a.py")).status_code == 201


def test_a_chunked_body_over_the_limit_is_a_413_problem(small_limit: str) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(64):
            yield b" " * 65536

    with httpx.Client(base_url=small_limit, timeout=30) as http:
        r = http.post("/v1/claims", content=chunks(), headers={"content-type": "application/json"})
        _problem(r, 413, "payload_too_large")
        assert http.get("/healthz").json()["ok"] is True


def test_the_body_limit_stops_reading_a_chunked_body_once_past_the_limit(
    sqlite_service: Service,
) -> None:
    app = create_app(sqlite_service, max_body_bytes=4096)
    reads: list[int] = []
    sent: list[Message] = []

    async def receive() -> Message:
        reads.append(1)
        return {"type": "http.request", "body": b" " * 1024, "more_body": len(reads) < 100_000}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/claims",
        "raw_path": b"/v1/claims",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
        "state": {},
    }
    asyncio.run(app(scope, receive, send))
    assert len(reads) == 5  # 5 KiB read, then refused: never the 100 MB offered
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["code"] == "payload_too_large"


def test_an_unexpected_exception_is_a_500_problem_with_an_incident_id(
    sqlite_service: Service,
) -> None:
    with running(sqlite_service) as base, httpx.Client(base_url=base, timeout=10) as http:
        sqlite_service.store.close()  # a fault nobody translates: sqlite3.ProgrammingError
        body = _problem(http.get("/v1/claims"), 500, "internal_error")
        assert body["incident"] and str(body["incident"]) in str(body["detail"])


def test_twenty_retries_with_one_idempotency_key_open_one_claim(http: httpx.Client) -> None:
    headers = {"Idempotency-Key": "open-a-1"}
    first = http.post("/v1/claims", json=claim_body("a.py"), headers=headers)
    assert first.status_code == 201
    retries = [http.post("/v1/claims", json=claim_body("a.py"), headers=headers) for _ in range(19)]
    assert {r.status_code for r in retries} == {201}
    assert all(r.json() == first.json() for r in retries)
    assert all(r.headers["idempotent-replayed"] == "true" for r in retries)
    assert len(http.get("/v1/claims").json()["claims"]) == 1


def test_concurrent_retries_with_one_key_run_the_request_once(http: httpx.Client) -> None:
    def post(_: int) -> httpx.Response:
        return http.post("/v1/claims", json=claim_body("b.py"), headers={"Idempotency-Key": "k"})

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(post, range(20)))
    assert {r.status_code for r in answers} == {201}
    assert len({r.json()["claim"]["id"] for r in answers}) == 1
    assert [c["status"] for c in http.get("/v1/claims").json()["claims"]] == ["active"]


def test_one_key_with_another_body_is_refused_and_changes_nothing(http: httpx.Client) -> None:
    headers = {"Idempotency-Key": "open-a-2"}
    assert http.post("/v1/claims", json=claim_body("a.py"), headers=headers).status_code == 201
    r = http.post("/v1/claims", json=claim_body("z.py"), headers=headers)
    assert _problem(r, 422, "validation_error")["field"] == "Idempotency-Key"
    assert [c["paths"] for c in http.get("/v1/claims").json()["claims"]] == [["a.py"]]


def test_a_malformed_idempotency_key_is_a_validation_problem(http: httpx.Client) -> None:
    r = http.post("/v1/claims", json=claim_body("a.py"), headers={"Idempotency-Key": "a b"})
    assert _problem(r, 422, "validation_error")["field"] == "Idempotency-Key"
    assert http.get("/v1/claims").json()["claims"] == []


def test_an_error_answer_is_replayed_too_and_a_new_key_runs_again(http: httpx.Client) -> None:
    bad = {**claim_body("a.py"), "repo": "nope"}
    first = http.post("/v1/claims", json=bad, headers={"Idempotency-Key": "e1"})
    again = http.post("/v1/claims", json=bad, headers={"Idempotency-Key": "e1"})
    assert first.status_code == again.status_code == 422
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    fresh = http.post("/v1/claims", json=bad, headers={"Idempotency-Key": "e2"})
    assert "idempotent-replayed" not in fresh.headers
