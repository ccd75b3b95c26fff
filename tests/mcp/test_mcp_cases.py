"""The cases of issue 7, with the SDK's real client, in-process, over HTTP and over stdio."""

from __future__ import annotations

import anyio
import pytest
from mcp_harness import McpEnv, call, deadline, fail, register

pytestmark = pytest.mark.anyio


async def test_the_second_session_sees_the_first_in_list_active_agents(env: McpEnv) -> None:
    async with env.connect() as first, env.connect() as second:
        one = await call(first, "register_agent_work", agent_name="alice", intent="docs pass")
        two = await call(second, "register_agent_work", agent_name="bob", intent="api work")
        assert one["sessionId"] != two["sessionId"]
        assert [a["sessionId"] for a in two["activeAgents"]] == [one["sessionId"]]
        listed = await call(second, "list_active_agents")
        by_id = {a["sessionId"]: a for a in listed["agents"]}
        assert by_id[one["sessionId"]]["agentName"] == "alice"
        assert by_id[one["sessionId"]]["intent"] == "docs pass"
        assert by_id[one["sessionId"]]["status"] == "active"


async def test_a_claim_on_a_file_makes_another_sessions_readiness_caution_naming_it(
    env: McpEnv,
) -> None:
    async with env.connect() as first, env.connect() as second:
        await call(first, "register_agent_work", agent_name="alice", intent="x", session_id="s1")
        await call(second, "register_agent_work", agent_name="bob", intent="y", session_id="s2")
        before = await call(
            second, "verify_change_readiness", session_id="s2", paths=["docs/foo.md"]
        )
        assert before["readiness"] == "ready"
        claimed = await call(
            first, "claim_files", session_id="s1", paths=["docs/foo.md"], reason="rewrite intro"
        )
        assert claimed["readiness"] == "ready"
        after = await call(second, "verify_change_readiness", session_id="s2", paths=["docs/*.md"])
        assert after["readiness"] == "caution"
        [evidence] = after["overlappingClaims"]
        assert evidence["sessionId"] == "s1" and evidence["agentName"] == "alice"
        assert evidence["claimId"] == claimed["claimId"]
        assert evidence["paths"] == ["docs/foo.md"] and evidence["witness"] == "docs/foo.md"
        assert evidence["reason"] == "rewrite intro"
        # The holder's own readiness ignores its own claim.
        own = await call(first, "verify_change_readiness", session_id="s1", paths=["docs/foo.md"])
        assert own["readiness"] == "ready"


async def test_ttl_expiry_releases_the_advisory_claim_without_an_explicit_call(
    env: McpEnv,
) -> None:
    async with env.connect() as client:
        await register(client, "s1", "s2")
        claimed = await call(
            client,
            "claim_files",
            session_id="s1",
            paths=["docs/foo.md"],
            reason="short",
            ttl_secs=env.ttl,
            agent_name="alice",
        )
        held = await call(client, "verify_change_readiness", session_id="s2", paths=["docs/foo.md"])
        assert held["readiness"] == "caution"
        env.advance(env.ttl + 1)
        async with deadline():
            while True:
                now = await call(
                    client, "verify_change_readiness", session_id="s2", paths=["docs/foo.md"]
                )
                if now["readiness"] == "ready":
                    break
                await anyio.sleep(0.05)  # poll interval of the bounded wait (real TTL on stdio)
        status = await call(client, "claim_status", claim_id=claimed["claimId"])
        assert status["status"] == "expired"


async def test_release_files_restores_ready_for_the_other_session_at_once(env: McpEnv) -> None:
    async with env.connect() as first, env.connect() as second:
        await register(second, "s1", "s2")
        await call(
            first,
            "claim_files",
            session_id="s1",
            paths=["docs/foo.md", "src/app.py"],
            reason="edit",
            agent_name="alice",
        )
        held = await call(second, "verify_change_readiness", session_id="s2", paths=["docs/foo.md"])
        assert held["readiness"] == "caution"
        released = await call(first, "release_files", session_id="s1")
        assert len(released["released"]) == 1
        free = await call(
            second, "verify_change_readiness", session_id="s2", paths=["docs/foo.md", "src/**"]
        )
        assert free == {"readiness": "ready", "next": "claim_files, then edit"}


async def test_a_stale_revision_is_a_tool_error_carrying_revision_conflict_and_the_current_claim(
    env: McpEnv,
) -> None:
    async with env.connect() as client:
        await register(client, "s1")
        opened = await call(
            client, "claim_open", objective="refactor app", paths=["src/app.py"], session_id="s1"
        )
        assert opened["status"] == "active"
        renewed = await call(
            client,
            "claim_renew",
            claim_id=opened["claimId"],
            expected_claim_revision=opened["revision"],
            expected_lease_revision=opened["leaseRevision"],
        )
        # A heartbeat moves the lease, not the claim (issue #32): its lease revision is stale.
        assert renewed["revision"] == opened["revision"]
        assert renewed["leaseRevision"] == opened["leaseRevision"] + 1
        error = await fail(
            client,
            "claim_renew",
            claim_id=opened["claimId"],
            expected_claim_revision=opened["revision"],
            expected_lease_revision=opened["leaseRevision"],
        )
        assert error["code"] == "revision_conflict"
        assert error["expected"] == opened["leaseRevision"]
        assert error["actual"] == renewed["leaseRevision"]
        assert error["current"]["id"] == opened["claimId"]
        assert error["current"]["revision"] == renewed["revision"]
        assert error["current"]["lease"]["revision"] == renewed["leaseRevision"]
