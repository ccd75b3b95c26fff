"""``detente mcp`` over stdio acts as the local principal, with the same rules.

On the store an authenticating server serves (:mod:`parity_world`), one child process
per ``[local] roles`` runs the parity table (:mod:`parity_table`) as the local
principal: with no roles it is refused as the no-role principal is, leaving the log
head where it was; with ``roles = ["claim"]`` it is another claimer, which owns the
claims it opens.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from parity_table import OPS
from parity_world import World, outcome_of, served

from mcp import Client as McpClient
from mcp import StdioServerParameters

# An exhaustive sweep: it runs in the slow stage (python -m pytest -m slow).
pytestmark = [pytest.mark.anyio, pytest.mark.slow]


# ---------------------------------------------------------------------------- MCP over stdio


def _stdio(repo: Path) -> McpClient:
    """``detente mcp --repo REPO``: a child process acting as the local principal on the
    repository's own store (the one the server serves). The SDK passes the child a
    minimal environment: ``DETENTE_SRC`` keeps it on the code under test."""
    from mcp.client.stdio import get_default_environment

    env = get_default_environment()
    for key in ("DETENTE_SRC", "PYTHONPATH"):
        if os.environ.get(key):
            env[key] = os.environ[key]
    script = Path(sys.executable).parent / "detente"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "detente"]
    args = [*command[1:], "mcp", "--repo", str(repo)]
    return McpClient(StdioServerParameters(command=command[0], args=args, env=env))


#: The table's operations on a claim of the caller's own (opened over stdio first).
OWN = ("renew", "change the objective", "abandon")


async def _own_claim(world: World) -> dict[str, Any]:
    """Open a claim over stdio (as ``local``); its record."""
    path = world.path()
    assert await outcome_of(world, "mcp", "local", OPS[0], {"path": path}) == "ok"
    with world.as_root() as root:
        claims = root.list_claims(repo="demo")["claims"]
    [mine] = [c for c in claims if c["paths"] == [path]]
    return {"claim": mine, "path": world.path()}


async def test_mcp_over_stdio_refuses_as_a_no_role_principal_and_with_local_roles_acts_as_one(
    tmp_path: Path, repo: Path
) -> None:
    """On a store served with authentication, ``detente mcp`` over stdio acts as ``local``:
    with no ``[local] roles`` every write is refused as a principal with no role is; with
    ``roles = ["claim"]`` it is another principal holding ``claim`` (and owns its claims)."""
    async with served(tmp_path, repo, {}) as world:
        with world.as_root() as root:
            root.register_document("demo", "AGENTS.md", "section_owned")
        failures = []
        for roles, like in (("", "mallory"), ('[local]\nroles = ["claim"]\n', "bob")):
            (repo / "detente.toml").write_text(roles)
            async with _stdio(repo) as stdio:
                world.mcp["local"] = stdio
                for op in OPS:
                    ctx = op.setup(world)
                    before = world.head()
                    got = await outcome_of(world, "mcp", "local", op, ctx)
                    if got != op.expected[like]:
                        failures.append(f"{op.name} over stdio ({like}): {got}")
                    elif got != "ok" and world.head() != before:
                        failures.append(f"{op.name} over stdio ({like}): refused but wrote")
                    world.abandon_live()
                if like == "bob":
                    for op in (o for o in OPS if o.name in OWN):
                        got = await outcome_of(world, "mcp", "local", op, await _own_claim(world))
                        if got != "ok":
                            failures.append(f"{op.name} of its own claim over stdio: {got}")
                        world.abandon_live()
    assert failures == [], "\n".join(failures)
