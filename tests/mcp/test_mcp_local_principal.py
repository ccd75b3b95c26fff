"""``detente mcp`` over stdio (local mode) on a store served with authentication.

A real authenticating server (real OIDC issuer, uvicorn) serves the repository's own
SQLite store, which marks it; alice opens a claim over ``/v1``. ``detente mcp --repo``
is then a real subprocess on the same store, spoken to by the SDK's client.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_harness import call, deadline, fail, stdio_client

from api.conftest import running
from detente.config import Roles
from detente.runtime import build_service
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.service import Service
from oidc_issuer import running_issuer

pytestmark = pytest.mark.anyio

AUD = "detente-stdio"


@pytest.fixture
def served(repo: Path) -> Iterator[tuple[Service, dict[str, Any]]]:
    service = build_service([repo])
    try:
        with running_issuer("EdDSA") as issuer:
            gate = AuthGate(
                oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)),
                roles=Roles({"claim": ("alice",)}),
            )
            with running(service, auth=gate) as base:
                body = {
                    "repo": "demo",
                    "objective": "alice edits the app",
                    "baseCommit": "HEAD",
                    "paths": ["src/app.py"],
                    "leaseTtlSeconds": 600,
                    "agent": {"id": "alice", "name": "alice"},
                }
                headers = {"Authorization": f"Bearer {issuer.token('alice', aud=AUD)}"}
                opened = httpx.post(f"{base}/v1/claims", json=body, headers=headers, timeout=15)
                assert opened.status_code == 201, opened.text
                yield service, opened.json()["claim"]
    finally:
        service.store.close()


async def test_mcp_over_stdio_may_read_but_not_abandon_a_claim_on_a_store_served_with_auth(
    served: tuple[Service, dict[str, Any]], repo: Path
) -> None:
    service, claim = served
    before = service.store.head()
    async with deadline(60), stdio_client("mcp", "--repo", str(repo)) as client:
        status = await call(client, "claim_status", claim_id=claim["id"])
        refused = await fail(
            client,
            "claim_abandon",
            claim_id=claim["id"],
            expected_claim_revision=claim["revision"],
        )
        opening = await fail(client, "claim_open", objective="mine", paths=["docs/foo.md"])
    assert status["status"] == "active"
    assert refused["code"] == opening["code"] == "forbidden"
    assert "--server" in refused["detail"] and "$DETENTE_TOKEN" in refused["detail"]
    assert service.store.head() == before
