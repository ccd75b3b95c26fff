"""Events as JSON pages and as a live SSE stream (real HTTP)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import httpx

from detente.service import Service

from support import claim_body


def _sse(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """Parse an SSE line stream into messages ``{id, event, data}`` (comments skipped)."""
    message: dict[str, str] = {}
    for line in lines:
        if not line:
            if message:
                yield message
            message = {}
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        message[key] = value[1:] if value.startswith(" ") else value


def _fill(http: httpx.Client, count: int) -> None:
    """Open claims until the log holds at least ``count`` events (2 per claim)."""
    i = 0
    while int(http.get("/healthz").json()["head"]) < count:
        http.post("/v1/claims", json=claim_body(f"f{i}.py"))
        i += 1


def test_events_page_by_since_and_limit_in_sequence_order(http: httpx.Client) -> None:
    _fill(http, 10)
    page = http.get("/v1/events", params={"since": 3, "limit": 4}).json()
    assert [e["seq"] for e in page["events"]] == [4, 5, 6, 7]
    assert page["nextSince"] == 7
    assert (
        page["events"][0]["prevHash"]
        == http.get("/v1/events", params={"since": 2, "limit": 1}).json()["events"][0]["hash"]
    )
    assert http.get("/v1/events", params={"limit": 0}).json()["code"] == "validation_error"


def test_reconnecting_with_last_event_id_41_delivers_42_to_60_once_in_order(
    http: httpx.Client, live: str
) -> None:
    _fill(http, 60)
    with (
        httpx.Client(base_url=live, timeout=10) as sse,
        sse.stream("GET", "/v1/events/stream", headers={"Last-Event-ID": "41"}) as r,
    ):
        assert r.headers["content-type"].startswith("text/event-stream")
        seen: list[int] = []
        for message in _sse(r.iter_lines()):
            seen.append(int(message["id"]))
            assert json.loads(message["data"])["seq"] == seen[-1]
            if seen[-1] >= 60:
                break
    head = http.get("/healthz").json()["head"]
    assert seen == list(range(42, head + 1))[: len(seen)] and seen[0] == 42 and seen[-1] == 60


def test_live_events_arrive_on_the_stream_after_they_are_committed(
    http: httpx.Client, live: str
) -> None:
    head = http.get("/healthz").json()["head"]
    got: list[dict[str, str]] = []
    connected = threading.Event()

    def watch() -> None:
        with (
            httpx.Client(base_url=live, timeout=10) as sse,
            sse.stream("GET", "/v1/events/stream", params={"since": head}) as r,
        ):
            connected.set()
            for message in _sse(r.iter_lines()):
                got.append(message)
                if len(got) == 2:
                    return

    t = threading.Thread(target=watch)
    t.start()
    assert connected.wait(timeout=10)
    http.post("/v1/claims", json=claim_body("live.py"))
    t.join(timeout=10)
    assert [m["event"] for m in got] == ["claim.announced", "claim.activated"]
    assert [int(m["id"]) for m in got] == [head + 1, head + 2]


def test_a_position_beyond_the_head_gets_an_explicit_resync(http: httpx.Client, live: str) -> None:
    _fill(http, 4)
    head = http.get("/healthz").json()["head"]
    with (
        httpx.Client(base_url=live, timeout=10) as sse,
        sse.stream("GET", "/v1/events/stream", headers={"Last-Event-ID": str(head + 100)}) as r,
    ):
        first = next(_sse(r.iter_lines()))
    assert first["event"] == "resync"
    assert json.loads(first["data"])["position"] == head


def test_the_stream_filters_by_repo(http: httpx.Client, sqlite_service: Service) -> None:
    r = http.get("/v1/events/stream", params={"repo": "nope"})
    assert r.status_code == 422 and r.json()["code"] == "validation_error"
