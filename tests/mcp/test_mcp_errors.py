"""Every MCP failure is a detente problem with a code and a next step, or a JSON-RPC error."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_harness import McpEnv, detente_command

from api.conftest import running
from detente.runtime import build_service

pytestmark = pytest.mark.anyio


def _problem(result: Any) -> dict[str, Any]:
    assert result.is_error is True
    data = result.structured_content
    assert data is not None and data == json.loads(result.content[0].text)
    assert data["code"] and data["detail"] and data["next"]
    return dict(data)


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("claim_files", {"paths": ["a.py"], "reason": "r"}, "session_id"),  # missing
        ("claim_renew", {"claim_id": 5}, "claim_id"),  # wrong type
        ("register_agent_work", {"agent_name": "a", "intent": "i", "ttl_secs": 0}, "ttl_secs"),
    ],
)
async def test_invalid_tool_arguments_are_a_validation_problem_naming_the_field(
    env: McpEnv, tool: str, arguments: dict[str, Any], field: str
) -> None:
    async with env.connect() as client:
        data = _problem(await client.call_tool(tool, arguments))
    assert data["code"] == "validation_error"
    assert data["field"] == field
    assert field in [e["field"] for e in data["errors"]]


async def test_an_unknown_tool_is_a_not_found_problem_listing_the_tools(env: McpEnv) -> None:
    async with env.connect() as client:
        data = _problem(await client.call_tool("claim_everything", {}))
    assert data["code"] == "not_found"
    assert "claim_open" in data["detail"]


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    out: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout

    def pump() -> None:
        for line in stdout:
            out.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return out


def test_every_malformed_stdio_line_gets_a_json_rpc_error_and_the_session_goes_on(
    repo: Path,
) -> None:
    proc = subprocess.Popen(
        [*detente_command(), "mcp", "--repo", str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None
    try:
        out = _lines(proc)
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        for line in ("this is not json", '{"hello": "world"}', "[1, 2", json.dumps(initialize)):
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        answers = [json.loads(out.get(timeout=20)) for _ in range(4)]
    finally:
        proc.kill()
        proc.wait(timeout=10)
    errors = [(a["id"], a["error"]["code"]) for a in answers[:3]]
    assert errors == [(None, -32700), (None, -32600), (None, -32700)]
    assert answers[3]["id"] == 1 and answers[3]["result"]["serverInfo"]["name"] == "detente"


def test_a_malformed_http_mcp_body_gets_a_json_rpc_error(repo: Path) -> None:
    service = build_service([repo], store_url="memory://")
    with running(service) as base:
        r = httpx.post(
            f"{base}/mcp",
            content=b"this is not json",
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
            },
            timeout=20,
        )
    service.store.close()
    assert 400 <= r.status_code < 500
    body = r.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32700
