"""Remote mode: the MCP tools sending their calls to a detente server over HTTP.

The server is a real uvicorn (``running``) on a fake clock; the MCP server runs either
in-process on the HTTP backend, or as ``detente mcp --server URL`` over stdio.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp_harness import call, fail, register, stdio_client

from api.conftest import running
from detente.client import connect
from detente.client.http import HttpClient
from detente.clock import FakeClock
from detente.mcp_server.server import build_server
from detente.runtime import build_service
from detente.service import Service
from mcp import Client

pytestmark = pytest.mark.anyio


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(repo: Path, tmp_path: Path, clock: FakeClock) -> Iterator[Service]:
    svc = build_service([repo], store_url=f"sqlite:///{tmp_path / 'server.db'}", clock=clock)
    yield svc
    svc.store.close()


@pytest.fixture
def base(service: Service) -> Iterator[str]:
    with running(service) as url:
        yield url


@pytest.fixture
def remote(base: str, repo: Path) -> Iterator[Client]:
    client = connect(base, repo, local=False)
    try:
        yield Client(build_server(client))
    finally:
        client.close()


async def test_remote_tools_report_caution_and_release_through_the_http_api(
    remote: Client, service: Service
) -> None:
    async with remote:
        await register(remote, "s1", "s2")
        claimed = await call(
            remote,
            "claim_files",
            session_id="s1",
            paths=["docs/foo.md"],
            reason="intro",
            agent_name="alice",
        )
        # The claim is in the server's own store.
        assert service.claims.get_claim(claimed["claimId"]).claim.advisory is True
        held = await call(remote, "verify_change_readiness", session_id="s2", paths=["docs/*"])
        assert held["readiness"] == "caution"
        assert held["overlappingClaims"][0]["sessionId"] == "s1"
        await call(remote, "release_files", session_id="s1", paths=["docs/foo.md"])
        free = await call(remote, "verify_change_readiness", session_id="s2", paths=["docs/*"])
        assert free["readiness"] == "ready"


async def test_remote_tools_see_the_servers_clock_release_an_expired_lease(
    remote: Client, clock: FakeClock
) -> None:
    async with remote:
        await register(remote, "s1", "s2")
        await call(remote, "claim_files", session_id="s1", paths=["a.py"], reason="r", ttl_secs=30)
        clock.advance(31)
        free = await call(remote, "verify_change_readiness", session_id="s2", paths=["a.py"])
        assert free["readiness"] == "ready"


async def test_a_remote_stale_revision_carries_revision_conflict_and_the_current_claim(
    remote: Client,
) -> None:
    async with remote:
        opened = await call(remote, "claim_open", objective="o", paths=["src/app.py"])
        error = await fail(
            remote,
            "claim_scope_add",
            claim_id=opened["claimId"],
            expected_claim_revision=opened["revision"] - 1,
            paths=["src/b.py"],
        )
        assert error["code"] == "revision_conflict"
        assert (error["expected"], error["actual"]) == (opened["revision"] - 1, opened["revision"])
        assert error["current"]["id"] == opened["claimId"]
        assert error["current"]["paths"] == ["src/app.py"]


async def test_a_remote_patch_of_an_unregistered_memory_document_is_not_found(
    remote: Client,
) -> None:
    async with remote:
        opened = await call(remote, "claim_open", objective="o", memory=["NOTES.md"])
        error = await fail(
            remote,
            "memory_patch_section",
            path="NOTES.md",
            section_key="build",
            expected_section_revision=1,
            expected_file_hash="0" * 64,
            claim_id=opened["claimId"],
            fencing_token=opened["fencingToken"],
            body="b",
        )
        assert error["code"] == "not_found"


async def test_an_older_server_without_memory_routes_gives_a_clear_invalid_transition() -> None:
    def older_server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"detail": "Not Found"})  # FastAPI's unknown route

    http = httpx.Client(transport=httpx.MockTransport(older_server), base_url="http://old")
    async with Client(build_server(HttpClient(http, repo_name="demo"))) as client:
        error = await fail(
            client,
            "memory_patch_section",
            path="AGENTS.md",
            section_key="build",
            expected_section_revision=1,
            expected_file_hash="0" * 64,
            claim_id="clm_1",
            fencing_token=1,
            body="b",
        )
    assert error["code"] == "invalid_transition"
    assert "does not serve memory documents" in error["detail"]


async def test_detente_mcp_with_server_url_works_on_the_servers_records(
    base: str, repo: Path, service: Service
) -> None:
    async with stdio_client("mcp", "--server", base, "--repo", str(repo)) as client:
        registered = await call(
            client, "register_agent_work", agent_name="codex", intent="tests", session_id="cx"
        )
        assert registered["status"] == "active"
        assert [a.session.session_id for a in service.agents.list_agents()] == ["cx"]


async def test_claim_scope_remove_drops_a_path_and_refuses_one_not_held(remote: Client) -> None:
    async with remote:
        opened = await call(remote, "claim_open", objective="o", paths=["src/a.py", "src/b.py"])
        narrowed = await call(
            remote,
            "claim_scope_remove",
            claim_id=opened["claimId"],
            expected_claim_revision=opened["revision"],
            paths=["src/b.py"],
        )
        assert narrowed["paths"] == ["src/a.py"]
        error = await fail(
            remote,
            "claim_scope_remove",
            claim_id=opened["claimId"],
            expected_claim_revision=narrowed["revision"],
            symbols=["Nope.nothing"],
        )
        assert error["code"] == "validation_error" and error["field"] == "removeSymbols[0]"
