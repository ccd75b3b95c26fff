"""The shared resource endpoints over real HTTP (uvicorn on loopback, SQLite)."""

from __future__ import annotations

import json
import threading

import httpx

from api.test_api_events import _sse
from detente.clock import FakeClock


def acquire(http: httpx.Client, name: str = "build", **body: object) -> httpx.Response:
    return http.post(f"/v1/resources/{name}/acquire", json={"ttlSeconds": 60, **body})


def test_acquire_grants_a_slot_with_a_fencing_token_and_a_full_resource_is_409_resource_busy(
    http: httpx.Client,
) -> None:
    first = acquire(http, capacity=1, note="nightly build")
    assert first.status_code == 200, first.text
    grant = first.json()["grant"]
    assert grant["fencingToken"] == 1 and grant["note"] == "nightly build"
    assert grant["expiresAt"] == "2026-01-01T00:01:00.000000Z" and grant["leaseRevision"] == 1
    busy = acquire(http)
    assert busy.status_code == 409
    assert busy.headers["content-type"] == "application/problem+json"
    problem = busy.json()
    assert problem["code"] == "resource_busy"
    assert problem["current"]["holders"][0]["fencingToken"] == 1


def test_a_waiter_learns_its_grant_from_the_event_stream_when_the_slot_frees(
    http: httpx.Client,
) -> None:
    held = acquire(http, capacity=1).json()["grant"]
    queued = acquire(http, wait=True).json()
    assert queued["grant"] is None and queued["waiting"]["position"] == 1
    ticket = queued["waiting"]["ticket"]
    since = http.get("/v1/events", params={"limit": 1000}).json()["nextSince"]
    released = http.post("/v1/resources/build/release", json={"fencingToken": held["fencingToken"]})
    assert released.status_code == 200, released.text
    events = http.get("/v1/events", params={"since": since}).json()["events"]
    granted = [e for e in events if e["type"] == "resource.granted"]
    assert [e["data"]["ticket"] for e in granted] == [ticket]
    assert granted[0]["data"]["fencingToken"] > held["fencingToken"]


def test_renew_with_the_lease_revision_extends_and_an_old_token_is_409_stale_fencing_token(
    http: httpx.Client, clock: FakeClock
) -> None:
    grant = acquire(http, capacity=1).json()["grant"]
    clock.advance(30)
    renewed = http.post(
        "/v1/resources/build/renew",
        json={"fencingToken": grant["fencingToken"], "expectedLeaseRevision": 1, "ttlSeconds": 60},
    )
    assert renewed.status_code == 200, renewed.text
    assert renewed.json()["grant"]["expiresAt"] == "2026-01-01T00:01:30.000000Z"
    again = http.post(
        "/v1/resources/build/renew",
        json={"fencingToken": grant["fencingToken"], "expectedLeaseRevision": 1, "ttlSeconds": 60},
    )
    assert again.status_code == 409 and again.json()["code"] == "revision_conflict"
    stale = http.post(
        "/v1/resources/build/renew",
        json={
            "fencingToken": 99,
            "expectedLeaseRevision": 1,
            "ttlSeconds": 60,
        },
    )
    assert stale.status_code == 409 and stale.json()["code"] == "stale_fencing_token"


def test_next_hands_out_numbers_once_with_a_four_digit_label(http: httpx.Client) -> None:
    first = http.post("/v1/resources/migrations/next", json={"atLeast": 42})
    assert first.status_code == 200, first.text
    assert (first.json()["number"], first.json()["label"]) == (42, "0042")
    second = http.post("/v1/resources/migrations/next", json={}).json()
    assert (second["number"], second["label"]) == (43, "0043")


def test_bad_input_is_422_naming_the_field_and_changes_nothing(http: httpx.Client) -> None:
    head = http.get("/v1/events", params={"limit": 1000}).json()["nextSince"]
    for name, body, field in (
        ("Build", {"ttlSeconds": 60}, "name"),
        ("build", {"ttlSeconds": 0}, "ttlSeconds"),
        ("build", {"ttlSeconds": 60, "capacity": 0}, "capacity"),
        ("build", {"ttlSeconds": "60"}, "ttlSeconds"),
        ("build", {"ttlSeconds": 60, "holder": "x"}, "holder"),
    ):
        response = http.post(f"/v1/resources/{name}/acquire", json=body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["field"] == field
    assert http.get("/v1/events", params={"since": head}).json()["events"] == []
    assert http.get("/v1/resources").json() == {"resources": []}


def test_list_and_show_answer_the_records_and_an_unknown_resource_is_404(
    http: httpx.Client,
) -> None:
    acquire(http, "db:test", capacity=2)
    [listed] = http.get("/v1/resources").json()["resources"]
    assert (listed["name"], listed["capacity"], listed["free"]) == ("db:test", 2, 1)
    shown = http.get("/v1/resources/db:test").json()["resource"]
    assert shown == listed
    missing = http.get("/v1/resources/port:5432")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"


def test_the_audit_covers_the_resources_events_and_rows(
    http: httpx.Client, clock: FakeClock
) -> None:
    acquire(http, capacity=1, ttlSeconds=10)
    acquire(http, wait=True)
    clock.advance(11)
    http.get("/v1/resources/build")  # the read expires the due grant first
    report = http.get("/v1/audit/verify").json()
    assert report["ok"] is True, report
    types = [e["type"] for e in http.get("/v1/events").json()["events"]]
    assert types.count("resource.expired") == 1 and types.count("resource.granted") == 2


def test_a_waiter_following_the_stream_filtered_by_its_ticket_learns_its_grant(
    http: httpx.Client, live: str
) -> None:
    held = acquire(http, capacity=1).json()["grant"]
    ticket = acquire(http, wait=True).json()["waiting"]["ticket"]
    head = http.get("/healthz").json()["head"]
    got: list[dict[str, str]] = []
    connected = threading.Event()

    def watch() -> None:
        query = {"since": head, "type": "resource.granted", "claim": ticket}
        with (
            httpx.Client(base_url=live, timeout=10) as sse,
            sse.stream("GET", "/v1/events/stream", params=query) as r,
        ):
            connected.set()
            for message in _sse(r.iter_lines()):
                got.append(message)
                return

    t = threading.Thread(target=watch)
    t.start()
    assert connected.wait(timeout=10)
    acquire(http, "db:test")  # another resource's grant: not this waiter's
    http.post("/v1/resources/build/release", json={"fencingToken": held["fencingToken"]})
    t.join(timeout=10)
    assert not t.is_alive()
    [message] = got
    assert message["event"] == "resource.granted"
    data = json.loads(message["data"])["data"]
    assert (data["ticket"], data["resource"]) == (ticket, "build")
    assert data["fencingToken"] > held["fencingToken"]
