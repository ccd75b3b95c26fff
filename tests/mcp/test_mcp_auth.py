"""MCP over streamable HTTP on an authenticating server: bearer token, recorded actor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client

from api.conftest import running
from detente.clock import FakeClock
from detente.runtime import build_service
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from mcp import Client
from mcp_harness import call, deadline

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
        refused = await http.post(
            f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
        )
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
        await call(client, "claim_files", session_id="s1", paths=["a.py"], reason="r")
    events = httpx.get(f"{base}/v1/events", headers=headers, timeout=10).json()["events"]
    assert events and {e["data"]["actor"]["principal"] for e in events} == {"alice"}
