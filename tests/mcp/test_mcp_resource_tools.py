"""The shared resource tools over MCP, on every transport (in-process, remote, HTTP, stdio)."""

from __future__ import annotations

import pytest
from mcp_harness import McpEnv, call, fail

pytestmark = pytest.mark.anyio


async def test_two_agents_share_one_slot_in_turn_and_the_waiter_is_granted_on_release(
    env: McpEnv,
) -> None:
    async with env.connect() as first, env.connect() as second:
        held = await call(first, "resource_acquire", name="db:test", ttl_secs=600, note="tests")
        token = held["grant"]["fencingToken"]
        busy = await fail(second, "resource_acquire", name="db:test")
        assert busy["code"] == "resource_busy" and "wait=true" in busy["next"]
        queued = await call(second, "resource_acquire", name="db:test", wait=True, ttl_secs=600)
        assert "grant" not in queued and queued["waiting"]["position"] == 1
        await call(first, "resource_release", name="db:test", fencing_token=token)
        status = await call(second, "resource_status", name="db:test")
        [holder] = status["resource"]["holders"]
        assert holder["ticket"] == queued["waiting"]["ticket"]
        assert holder["fencingToken"] > token
        stale = await fail(
            first, "resource_renew", name="db:test", fencing_token=token, expected_lease_revision=1
        )
        assert stale["code"] == "stale_fencing_token"
        renewed = await call(
            second,
            "resource_renew",
            name="db:test",
            fencing_token=holder["fencingToken"],
            expected_lease_revision=1,
        )
        assert renewed["grant"]["leaseRevision"] == 2


async def test_two_agents_never_get_the_same_migration_number(env: McpEnv) -> None:
    async with env.connect() as first, env.connect() as second:
        one = await call(first, "resource_next_number", name="migrations", at_least=41)
        two = await call(second, "resource_next_number", name="migrations")
        assert (one["label"], two["label"]) == ("0041", "0042")
        listed = await call(first, "resource_status")
        assert [r["name"] for r in listed["resources"]] == ["migrations"]


async def test_a_bad_resource_name_is_a_validation_error_naming_it(env: McpEnv) -> None:
    async with env.connect() as client:
        error = await fail(client, "resource_acquire", name="Build")
        assert error["code"] == "validation_error" and error["field"] == "name"
