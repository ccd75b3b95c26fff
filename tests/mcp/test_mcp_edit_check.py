"""The ``edit_check`` tool on every transport (in process, a remote client, MCP over HTTP,
stdio): one call answers whether a session may write a file now, and if not, who holds
it, until when, and what to run."""

from __future__ import annotations

import pytest
from mcp_harness import McpEnv, call, fail, register

pytestmark = pytest.mark.anyio


async def test_edit_check_allows_the_sessions_own_file_and_denies_another_claims_naming_it(
    env: McpEnv,
) -> None:
    async with env.connect() as client:
        await register(client, "s1", "s2")
        opened = await call(
            client,
            "claim_open",
            objective="Retry failed webhook calls",
            paths=["src/app.py"],
            session_id="s1",
            agent_name="alice",
        )
        own = await call(client, "edit_check", paths=["src/app.py"], session_id="s1")
        other = await call(client, "edit_check", paths=["src/app.py"], session_id="s2")
        free = await call(client, "edit_check", paths=["docs/foo.md"], session_id="s1")
        bad = await fail(client, "edit_check", paths=["../x.py"], session_id="s1")

    assert own["decision"] == "allow" and own["claimId"] == opened["claimId"]
    assert other["decision"] == "deny" and "claimId" not in other
    [holder] = other["holders"]
    assert holder["claimId"] == opened["claimId"] and holder["agent"] == "alice"
    assert holder["objective"] == "Retry failed webhook calls" and holder["leaseExpiresAt"]
    assert other["options"][0] == {
        "action": "wait",
        "command": f"detente claim status {opened['claimId']}",
    }
    assert free["decision"] == "allow" and free["unclaimed"] == ["docs/foo.md"]
    assert bad["code"] == "validation_error"
