"""Every MCP failure is a detente problem with a code and a next step, or a JSON-RPC error."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any, AnyStr

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


def _lines(proc: subprocess.Popen[AnyStr]) -> queue.Queue[AnyStr]:
    out: queue.Queue[AnyStr] = queue.Queue()
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


def _answers(repo: Path, lines: list[str | bytes]) -> list[dict[str, Any]]:
    """The answers of ``detente mcp`` to ``lines`` after an initialize (raw bytes)."""
    proc = subprocess.Popen(
        [*detente_command(), "mcp", "--repo", str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    out = _lines(proc)

    def send(line: str | bytes) -> None:
        assert proc.stdin is not None
        proc.stdin.write((line if isinstance(line, bytes) else line.encode()) + b"\n")
        proc.stdin.flush()

    try:
        # A client waits for initialize's answer before it sends anything else (MCP
        # lifecycle); JSON-RPC does not order answers, so the rest are sorted by id.
        send(json.dumps(initialize))
        assert json.loads(out.get(timeout=20))["id"] == 0
        for line in lines:
            send(line)
        answers = [json.loads(out.get(timeout=20)) for _ in lines]
    finally:
        proc.kill()
        proc.wait(timeout=10)
    return sorted(answers, key=lambda a: (a.get("id") is None, a.get("id") or 0))


def _call(id_: int, arguments: str) -> str:
    return (
        f'{{"jsonrpc": "2.0", "id": {id_}, "method": "tools/call", '
        f'"params": {{"name": "claim_list", "arguments": {arguments}}}}}'
    )


def test_a_stdio_line_a_parser_may_read_differently_gets_an_error_carrying_its_id(
    repo: Path,
) -> None:
    answers = _answers(
        repo,
        [
            _call(1, '{"status": "a\\ud800b"}'),  # a lone surrogate, escaped as JSON allows
            _call(2, '{"limit": NaN}'),
            _call(3, '{"limit": Infinity}'),
            _call(4, '{"status": "active", "status": "expired"}'),  # a duplicate key
            b"\xef\xbb\xbf" + _call(5, "{}").encode(),  # a byte order mark
            _call(6, '{"status": "caf\xc3"}').encode("latin-1"),  # not UTF-8
            '{"jsonrpc": "2.0", "id": 7, "method": "ping"}',
        ],
    )

    assert [a.get("id") for a in answers] == [1, 2, 3, 4, 5, 6, 7]
    for answer in answers[:6]:
        assert answer["error"]["code"] in (-32700, -32600), answer
    assert "surrogate" in answers[0]["error"]["message"]
    assert "duplicate" in answers[3]["error"]["message"]
    assert answers[6]["result"] == {}
