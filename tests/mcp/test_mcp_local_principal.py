"""``detente mcp`` over stdio (local mode) on a store served with authentication.

A real authenticating server (real OIDC issuer, uvicorn) serves the repository's own
SQLite store, which marks it; alice opens a claim over ``/v1``. ``detente mcp --repo``
is then a real subprocess on the same store, spoken to by the SDK's client.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import call, deadline, fail, stdio_client

from detente.service import Service
from served_with_auth import alice_claim_served_with_auth

pytestmark = pytest.mark.anyio

AUD = "detente-stdio"


@pytest.fixture
def served(repo: Path) -> Iterator[tuple[Service, dict[str, Any]]]:
    """The repository's store served with authentication; alice's claim on src/app.py."""
    with alice_claim_served_with_auth(repo, "demo", "src/app.py", audience=AUD) as served:
        yield served


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
