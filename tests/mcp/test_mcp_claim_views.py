"""MCP tools answer symbol questions as ``claim check`` does, and every tool returning a
claim view carries the parts the HTTP view carries (real source repository)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import call, fail

from detente.client.inprocess import InProcessClient
from detente.clock import FakeClock
from detente.mcp_server.server import build_server
from detente.runtime import build_service
from detente.service import Service
from mcp import Client

from semantic_support import require_model
from source_repo import make_source_repo

pytestmark = pytest.mark.anyio

RETRY = "src/settlement/retry.py"
STORE = "internal/storage/store.go"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    root = tmp_path / "src-repo"
    make_source_repo(root)
    svc = build_service([root], store_url="memory://", clock=FakeClock())
    yield svc
    svc.store.close()


async def test_claim_check_answers_on_symbols_and_limits_a_symbol_claims_file(
    service: Service,
) -> None:
    async with Client(build_server(InProcessClient(service))) as client:
        opened = await call(
            client, "claim_open", objective="Give up sooner", symbols=["RetryPolicy.give_up"]
        )
        mine = opened["claimId"]
        assert opened["symbols"] == [f"{RETRY}::RetryPolicy.give_up"]
        whole = await call(client, "claim_check", claim_id=mine, paths=[RETRY])
        assert whole["limitedTo"] == {RETRY: [f"{RETRY}::RetryPolicy.give_up"]}
        own = await call(
            client, "claim_check", claim_id=mine, paths=[f"{RETRY}::RetryPolicy.give_up"]
        )
        assert own["paths"] == [f"{RETRY}::RetryPolicy.give_up"]
        assert "limitedTo" not in own
        other = await fail(client, "claim_check", claim_id=mine, paths=[f"{RETRY}::default_policy"])
        assert other["code"] == "out_of_scope"


async def test_readiness_on_a_symbol_meets_only_claims_on_that_symbol(service: Service) -> None:
    async with Client(build_server(InProcessClient(service))) as client:
        await call(
            client,
            "register_agent_work",
            session_id="s-alice",
            agent_name="alice",
            intent="getters",
        )
        held = await call(
            client,
            "claim_open",
            objective="Go storage getters",
            symbols=[f"{STORE}::Store.Get"],
            session_id="s-alice",
        )
        await call(
            client, "register_agent_work", session_id="s-bob", agent_name="bob", intent="storage"
        )
        method = await call(
            client, "verify_change_readiness", session_id="s-bob", paths=[f"{STORE}::Store.Get"]
        )
        assert method["readiness"] == "caution"
        assert [c["claimId"] for c in method["overlappingClaims"]] == [held["claimId"]]
        beside = await call(
            client, "verify_change_readiness", session_id="s-bob", paths=[f"{STORE}::New"]
        )
        assert beside["readiness"] == "ready"
        whole = await call(client, "verify_change_readiness", session_id="s-bob", paths=[STORE])
        assert whole["readiness"] == "caution"  # a file contains its symbols


def _view_parts(view: dict[str, Any]) -> set[str]:
    """The non-empty parts of an HTTP claim view, named as the tools name them."""
    names = {"meeting": "meetingId"}
    return {names.get(k, k) for k, v in view.items() if k != "claim" and v not in (None, [], {})}


async def test_every_tool_returning_a_claim_view_carries_the_http_views_parts(
    service: Service,
) -> None:
    require_model()
    http = InProcessClient(service)
    async with Client(build_server(http)) as client:
        other = await call(
            client, "claim_open", objective="Retry failed ledger postings", paths=["docs/**"]
        )
        opened = await call(
            client,
            "claim_open",
            objective="Make ledger posting retry failed entries",
            paths=["web/**"],
        )
        mine = opened["claimId"]
        assert {o["claimId"] for o in opened["semanticOverlaps"]} == {other["claimId"]}
        status = await call(client, "claim_status", claim_id=mine)
        view = http.get_claim(mine)
        assert _view_parts(dict(view)) <= set(status)
        assert [o["claimId"] for o in status["semanticOverlaps"]] == [
            o["claimId"] for o in view["semanticOverlaps"]
        ]
        scoped = await call(
            client,
            "claim_scope_add",
            claim_id=mine,
            expected_claim_revision=status["revision"],
            paths=["README.md"],
        )
        assert "semanticOverlaps" in scoped
        changed = await call(
            client,
            "claim_objective",
            claim_id=mine,
            expected_claim_revision=scoped["revision"],
            objective="Retry failed ledger postings with backoff",
        )
        assert [o["claimId"] for o in changed["semanticOverlaps"]] == [other["claimId"]]
