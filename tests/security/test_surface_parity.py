"""Every surface enters the same authorization: ``/v1``, MCP over HTTP, the in-process
client.

One authenticating server (a real OIDC issuer, a real uvicorn serving ``/v1`` and ``/mcp``)
over the SQLite store of a real git repository (:mod:`parity_world`). Each operation of
the table (:mod:`parity_table`: every one an MCP tool carries) is run on each surface by
the claim's owner, by another principal holding ``claim``, and by an authenticated
principal with no role; the outcome (``ok`` or the error code) must be the same on every
surface, and a refusal must leave the event log's head where it was. The MCP surface is
the SDK's real client over streamable HTTP; the in-process surface is
:class:`~detente.client.inprocess.InProcessClient` over
:class:`~detente.operations.door.Operations` with the principal bound. The catalog's
every mutating operation: ``test_surface_parity_catalog.py``; MCP over stdio:
``test_surface_parity_stdio.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from parity_table import MCP_CARRIES, OPS, new_claim
from parity_world import ACTORS, SURFACES, outcome_of, served

from detente.config import RateLimit
from detente.operations.catalog import OPERATIONS
from detente.operations.door import Operations

pytestmark = pytest.mark.anyio


async def test_every_operation_has_the_same_outcome_on_v1_mcp_and_in_process_for_each_principal(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reached: list[str] = []  # the operations the MCP tools carried (the server's threads)
    run = Operations.run

    def traced(self: Operations, op: Any, *args: Any, **query: Any) -> Any:
        reached.append(op.name)
        return run(self, op, *args, **query)

    monkeypatch.setattr(Operations, "run", traced)
    async with served(tmp_path, repo, {}) as world:
        with world.as_root() as root:
            root.register_document("demo", "AGENTS.md", "section_owned")
        failures = []
        over_mcp: set[str] = set()
        for op in OPS:
            for who in ACTORS:
                for surface in SURFACES:
                    ctx = op.setup(world)
                    before = world.head()
                    reached.clear()
                    got = await outcome_of(world, surface, who, op, ctx)
                    if surface == "mcp":
                        over_mcp.update(reached)
                    if got != op.expected[who]:
                        failures.append(f"{op.name} by {who} on {surface}: {got}")
                    elif got != "ok" and world.head() != before:
                        failures.append(f"{op.name} by {who} on {surface}: refused but wrote")
                    world.abandon_live()
        assert failures == [], "\n".join(failures)
    writes = {o.name for o in OPERATIONS if o.writes}
    assert writes & over_mcp == MCP_CARRIES


async def test_one_rate_limit_counts_claim_opens_on_v1_mcp_and_in_process_alike(
    tmp_path: Path, repo: Path
) -> None:
    limits = {"claim-open": RateLimit(per_principal=2, window_seconds=60)}
    async with served(tmp_path, repo, limits) as world:
        await outcome_of(world, "mcp", "alice", OPS[1], {"path": "src/warm.py"})  # one open
        with world.client("v1", "alice") as v1:
            v1.open_claim(new_claim({"path": world.path()}))  # the second: the limit
        # a session registered before the limit bites, for claim_files below
        session = {"session_id": "late", "agent_name": "x", "intent": "edit"}
        await world.mcp["alice"].call_tool("register_agent_work", session)
        before = world.head()
        outcomes = {
            surface: await outcome_of(world, surface, "alice", OPS[0], {"path": world.path()})
            for surface in SURFACES
        }
        files = await world.mcp["alice"].call_tool(
            "claim_files", {"session_id": "late", "paths": [world.path()], "reason": "more"}
        )
        assert world.head() == before
        bob = await outcome_of(world, "mcp", "bob", OPS[0], {"path": world.path()})
    assert outcomes == {"v1": "rate_limited", "mcp": "rate_limited", "inprocess": "rate_limited"}
    assert files.is_error and (files.structured_content or {}).get("code") == "rate_limited"
    assert bob == "ok"  # bob has his own count


async def test_releasing_another_principals_session_files_over_mcp_is_forbidden(
    tmp_path: Path, repo: Path
) -> None:
    async with served(tmp_path, repo, {}) as world:
        alice, bob = world.mcp["alice"], world.mcp["bob"]
        session = {"session_id": "alice-1", "agent_name": "a", "intent": "edit"}
        assert not (await alice.call_tool("register_agent_work", session)).is_error
        files = {"session_id": "alice-1", "paths": [world.path()], "reason": "edit"}
        assert not (await alice.call_tool("claim_files", files)).is_error
        before = world.head()
        released = await bob.call_tool("release_files", {"session_id": "alice-1"})
        assert world.head() == before
    assert released.is_error and (released.structured_content or {}).get("code") == "forbidden"
