"""The ``claim_objective`` tool over MCP (the SDK's in-process client)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import call, fail

from detente.client.inprocess import InProcessClient
from detente.clock import FakeClock
from detente.mcp_server.server import build_server
from detente.runtime import build_service
from detente.service import Service
from mcp import Client

pytestmark = pytest.mark.anyio


@pytest.fixture
def service(repo: Path) -> Iterator[Service]:
    svc = build_service([repo], store_url="memory://", clock=FakeClock())
    yield svc
    svc.store.close()


async def test_claim_objective_changes_the_objective_and_names_a_stale_revision(
    service: Service,
) -> None:
    client = Client(build_server(InProcessClient(service)))
    async with client:
        opened = await call(client, "claim_open", objective="o", paths=["src/app.py"])
        changed = await call(
            client,
            "claim_objective",
            claim_id=opened["claimId"],
            expected_claim_revision=opened["revision"],
            objective="Retry failed webhook calls",
        )
        assert changed["objective"] == "Retry failed webhook calls"
        assert changed["revision"] == opened["revision"] + 1
        error = await fail(
            client,
            "claim_objective",
            claim_id=opened["claimId"],
            expected_claim_revision=opened["revision"],
            objective="something else",
        )
        assert error["code"] == "revision_conflict"
