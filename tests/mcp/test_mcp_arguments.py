"""Tool arguments are as strict as the HTTP API: unknown arguments and ghost sessions are
refused with a code, a field and a next step, and refused calls change nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import call, fail, register, resource

from api.conftest import running
from detente.client import connect
from detente.client.inprocess import InProcessClient
from detente.clock import FakeClock
from detente.mcp_server.resources import CLAIMS_URI
from detente.mcp_server.server import build_server
from detente.runtime import build_service
from detente.service import Service
from mcp import Client

pytestmark = pytest.mark.anyio


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(repo: Path, clock: FakeClock) -> Iterator[Service]:
    svc = build_service([repo], store_url="memory://", clock=clock)
    yield svc
    svc.store.close()


@pytest.fixture(params=["inprocess", "http"])
def client(
    request: pytest.FixtureRequest, service: Service, repo: Path, clock: FakeClock
) -> Iterator[Client]:
    if request.param == "inprocess":
        yield Client(build_server(InProcessClient(service)))
        return
    with running(service) as base, connect(base, repo, local=False) as http:
        yield Client(build_server(http, clock=clock))


async def _claims(client: Client) -> list[str]:
    return [c["claimId"] for c in (await resource(client, CLAIMS_URI))["claims"]]


async def test_claim_files_with_a_session_that_never_registered_is_not_found_and_claims_nothing(
    client: Client,
) -> None:
    async with client:
        error = await fail(client, "claim_files", session_id="ses_nope", paths=["x.py"], reason="x")
        assert error["code"] == "not_found" and error["field"] == "session_id"
        assert "register_agent_work" in error["next"]
        assert await _claims(client) == []
        agents = await call(client, "list_active_agents")
        assert agents.get("agents", []) == []


async def test_claim_open_with_an_unregistered_session_is_not_found(client: Client) -> None:
    async with client:
        error = await fail(
            client, "claim_open", objective="o", paths=["a.py"], session_id="ses_typo"
        )
        assert error["code"] == "not_found" and "register_agent_work" in error["next"]
        assert await _claims(client) == []
        opened = await call(client, "claim_open", objective="o", paths=["a.py"])
        assert opened["status"] == "active"  # without a session: a plain protocol claim


async def test_a_session_that_has_ended_must_register_again_before_claiming(
    client: Client, clock: FakeClock
) -> None:
    async with client:
        await call(
            client, "register_agent_work", agent_name="a", intent="i", session_id="s1", ttl_secs=60
        )
        clock.advance(61)
        error = await fail(client, "claim_files", session_id="s1", paths=["x.py"], reason="x")
        assert error["code"] == "not_found" and "has ended" in error["detail"]
        assert "session_id='s1'" in error["next"]
        assert await _claims(client) == []
        await register(client, "s1")
        claimed = await call(client, "claim_files", session_id="s1", paths=["x.py"], reason="x")
        assert await _claims(client) == [claimed["claimId"]]


async def test_readiness_and_release_with_an_unknown_session_are_not_found(
    client: Client,
) -> None:
    async with client:
        ready = await fail(client, "verify_change_readiness", session_id="ghost", paths=["x"])
        gone = await fail(client, "release_files", session_id="ghost")
        assert ready["code"] == gone["code"] == "not_found"


async def test_an_unknown_argument_is_a_validation_error_naming_it_and_changes_nothing(
    client: Client,
) -> None:
    async with client:
        error = await fail(
            client, "register_agent_work", agent_name="x", intent="x", bogus=1, zzz=2
        )
        assert error["code"] == "validation_error" and error["field"] == "bogus"
        assert [e["field"] for e in error["errors"]] == ["bogus", "zzz"]
        assert "session_id" in error["detail"]  # the arguments it does have
        assert (await call(client, "list_active_agents")).get("agents", []) == []


async def test_a_misspelled_session_id_is_refused_rather_than_starting_a_new_session(
    client: Client,
) -> None:
    async with client:
        await register(client, "s1")
        error = await fail(
            client, "register_agent_work", agent_name="s1", intent="y", sesion_id="s1"
        )
        assert error["code"] == "validation_error" and error["field"] == "sesion_id"
        agents = (await call(client, "list_active_agents"))["agents"]
        assert [a["sessionId"] for a in agents] == ["s1"]


async def test_an_unknown_field_inside_an_object_argument_is_refused(client: Client) -> None:
    async with client:
        error = await fail(
            client, "reconcile_diff_intent", a={"paths": ["a.py"], "pathz": ["b.py"]}, b={}
        )
    assert error["code"] == "validation_error" and error["field"] == "a.pathz"


async def test_every_tool_schema_says_it_takes_no_other_arguments(client: Client) -> None:
    async with client:
        tools = (await client.list_tools()).tools
    assert tools and all(t.input_schema.get("additionalProperties") is False for t in tools)
