"""Helpers of the MCP tests: transports, tool calls, bounded waits."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp.client.stdio import get_default_environment
from mcp.server.mcpserver import MCPServer

from detente.clock import FakeClock
from detente.service import Service
from mcp import Client, StdioServerParameters

#: Bound on every wait for a condition (seconds).
WAIT = 15.0


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` (an oracle independent of detente); its stdout, stripped."""
    proc = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return proc.stdout.strip()


def detente_command() -> list[str]:
    """How to start the ``detente`` console script of this interpreter."""
    script = Path(sys.executable).parent / "detente"
    if script.exists():
        return [str(script)]
    found = shutil.which("detente")
    if found:
        return [found]
    return [sys.executable, "-c", "from detente.cli.main import main; main()"]


def stdio_client(*args: str) -> Client:
    """A client that spawns ``detente <args>`` and talks MCP over its stdio.

    The SDK passes the child only a minimal environment; ``PYTHONPATH`` is added so the
    child runs the code under test (a worktree's ``src``), not whatever is installed.
    """
    command, *prefix = detente_command()
    env = get_default_environment()
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return Client(StdioServerParameters(command=command, args=[*prefix, *args], env=env))


@dataclass
class McpEnv:
    """One transport: ``connect()`` opens a client; ``advance`` moves fake time."""

    kind: str
    repo: Path
    ttl: int
    clock: FakeClock | None = None
    server: MCPServer[Any] | None = None
    url: str | None = None
    service: Service | None = None

    def connect(self) -> AbstractAsyncContextManager[Client]:
        if self.server is not None:
            return Client(self.server)
        if self.url is not None:
            return Client(self.url)
        return stdio_client("mcp", "--repo", str(self.repo))

    def advance(self, seconds: float) -> None:
        """Move the fake clock (real time passes by itself over stdio)."""
        if self.clock is not None:
            self.clock.advance(seconds)


# ---------------------------------------------------------------------------- calls


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; its structured result (also checked against the text)."""
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    assert not result.is_error, f"{tool} failed: {text}"
    assert result.structured_content is not None
    assert json.loads(text) == result.structured_content
    return dict(result.structured_content)


async def register(client: Client, *session_ids: str) -> None:
    """Register each session (named after itself), as an agent does before claim_files."""
    for sid in session_ids:
        await call(client, "register_agent_work", agent_name=sid, intent="test", session_id=sid)


async def fail(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must fail with a tool error; the error's data."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} unexpectedly succeeded: {result.structured_content}"
    assert result.structured_content is not None
    return dict(result.structured_content)


async def resource(client: Client, uri: str) -> dict[str, Any]:
    """Read a JSON resource."""
    result = await client.read_resource(uri)
    data: dict[str, Any] = json.loads(result.contents[0].text)  # type: ignore[union-attr]
    return data


@asynccontextmanager
async def deadline(seconds: float = WAIT) -> AsyncIterator[None]:
    """Fail the block if it runs longer than ``seconds``."""
    with anyio.fail_after(seconds):
        yield
