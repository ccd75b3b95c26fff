"""MCP over streamable HTTP on an authenticating server: bearer token, recorded actor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp_harness import call, deadline, register

from api.conftest import running
from detente.clock import FakeClock
from detente.runtime import build_service
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from mcp import Client
from oidc_issuer import Issuer, running_issuer

pytestmark = pytest.mark.anyio

AUD = "detente-test"


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer("EdDSA") as it:
        yield it


@pytest.fixture
def base(issuer: Issuer, repo: Path, tmp_path: Path) -> Iterator[str]:
    service = build_service([repo], store_url=f"sqlite:///{tmp_path / 'd.db'}", clock=FakeClock())
    gate = AuthGate(oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)))
    try:
        with running(service, auth=gate) as url:
            yield url
    finally:
        service.store.close()


async def test_mcp_without_a_token_is_401_pointing_at_the_resource_metadata(base: str) -> None:
    async with httpx2.AsyncClient() as http:
        refused = await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401
    assert "/.well-known/oauth-protected-resource" in refused.headers["www-authenticate"]


async def test_mcp_tool_calls_with_a_bearer_token_act_as_its_principal(
    base: str, issuer: Issuer
) -> None:
    headers = {"Authorization": f"Bearer {issuer.token('alice')}"}
    async with (
        deadline(),
        httpx2.AsyncClient(headers=headers, timeout=15) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
    ):
        await register(client, "s1")
        await call(client, "claim_files", session_id="s1", paths=["a.py"], reason="r")
    events = httpx.get(f"{base}/v1/events", headers=headers, timeout=10).json()["events"]
    assert events and {e["data"]["actor"]["principal"] for e in events} == {"alice"}


async def test_another_principal_cannot_use_an_mcp_session_it_did_not_open(
    base: str, issuer: Issuer
) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    alice = {**accept, "Authorization": f"Bearer {issuer.token('alice')}"}
    bob = {**accept, "Authorization": f"Bearer {issuer.token('bob')}"}
    async with httpx2.AsyncClient(timeout=15) as http:
        opened = await http.post(f"{base}/mcp", json=initialize, headers=alice)
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        hijack = await http.post(
            f"{base}/mcp", json=ping, headers={**bob, "Mcp-Session-Id": session}
        )
        assert hijack.status_code == 403 and hijack.json()["code"] == "forbidden"
        own = await http.post(
            f"{base}/mcp", json=ping, headers={**alice, "Mcp-Session-Id": session}
        )
        assert own.status_code != 403
