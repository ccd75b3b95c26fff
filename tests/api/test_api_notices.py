"""``GET/POST /v1/agents/{sessionId}/notices`` over real HTTP: what woke a session and its
receipts; a malformed session id is a ``validation_error`` on both, an id never
registered has no notices to read and none to acknowledge."""

from __future__ import annotations

import httpx
import pytest


def test_a_registered_session_reads_its_notices_and_records_a_receipt(
    http: httpx.Client,
) -> None:
    registered = http.post(
        "/v1/agents", json={"sessionId": "claude-S1", "agentName": "claude", "ttlSeconds": 60}
    )
    assert registered.status_code == 201, registered.text

    read = http.get("/v1/agents/claude-S1/notices")
    up_to = read.json()["scannedUpTo"]
    receipt = http.post(
        "/v1/agents/claude-S1/notices", json={"receipt": "delivered", "upTo": up_to}
    )

    assert read.status_code == 200 and read.json()["notices"] == []
    assert receipt.status_code == 200, receipt.text
    assert receipt.json()["agent"]["notices"]["deliveredUpTo"] == up_to


@pytest.mark.parametrize("session", ["a%01b", "x" * 300, ".hidden"])
def test_a_malformed_session_id_is_refused_on_read_and_on_receipt(
    http: httpx.Client, session: str
) -> None:
    read = http.get(f"/v1/agents/{session}/notices")
    receipt = http.post(f"/v1/agents/{session}/notices", json={"receipt": "seen", "upTo": 0})

    assert read.status_code == 422, read.text
    assert read.json()["code"] == "validation_error" and read.json()["field"] == "sessionId"
    assert receipt.status_code in (404, 422), receipt.text


def test_a_session_never_registered_has_no_notices_and_its_receipt_is_not_found(
    http: httpx.Client,
) -> None:
    read = http.get("/v1/agents/nobody-1/notices")
    receipt = http.post("/v1/agents/nobody-1/notices", json={"receipt": "seen", "upTo": 0})

    assert read.status_code == 200 and read.json() == {
        "notices": [],
        "scannedUpTo": 0,
        "receipts": None,
    }
    assert receipt.status_code == 404 and receipt.json()["code"] == "not_found"
