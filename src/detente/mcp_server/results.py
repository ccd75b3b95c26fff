"""Tool results for agents: compact JSON, ids and next actions first, errors with codes.

The MCP edge's error table. A :class:`~detente.errors.DetenteError` becomes a *tool
execution error* (``CallToolResult`` with ``isError: true``), not a JSON-RPC protocol
error, so the model reads it and can recover. Its data is the problem object
``{code, detail, next, ...extra}`` (for ``revision_conflict``: ``expected``, ``actual``,
``current``, ``eventIds``), sent both as ``structuredContent`` and as the JSON text
block (MCP's rule for structured results). ``next`` is the one action the agent should
take, from :data:`NEXT_BY_CODE`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult, TextContent

from detente.errors import DetenteError

__all__ = ["NEXT_BY_CODE", "compact", "failure", "problem_data", "success"]

#: What an agent should do after each error code (the MCP edge's table).
NEXT_BY_CODE: dict[str, str] = {
    "validation_error": "fix the argument named in 'field' and call again",
    "not_found": "check the id (claim_status, meeting_list, list_active_agents)",
    "revision_conflict": (
        "someone changed the record first: read 'current', decide again, and retry with "
        "its revision ('actual')"
    ),
    "stale_base": "fetch and rebase onto 'actual', then retry",
    "lease_expired": (
        "your lease ran out and the claim is frozen: open a new claim (claim_open) or ask a "
        "human to take it over; do not keep editing under it"
    ),
    "invalid_transition": "read 'detail'; the record's state does not allow this action",
    "overlap_blocking": "another claim holds the target: negotiate in its meeting (meeting_list)",
    "stale_fencing_token": "another holder took over: re-read the claim before writing",
    "evidence_rejected": "fix every item in 'failures' and call again",
    "resource_busy": (
        "every slot is held ('current' lists the holders and their deadlines): call "
        "resource_acquire again with wait=true to queue, or do something else first"
    ),
    "out_of_scope": "add the paths to your claim first (claim_scope_add)",
    "forbidden": "this principal may not act on the record; ask its holder or a human",
    "unauthenticated": "configure credentials for the detente server",
    "server_unavailable": "start 'detente serve' (or drop --server to work locally), then retry",
    "store_unavailable": "the store is unavailable; retry shortly",
    "internal_error": (
        "an unexpected server error: retry once; if it repeats, report the 'incident' id to a human"
    ),
}


def compact(data: Any) -> str:
    """JSON without spaces (agents pay per token); non-ASCII kept as is."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


def success(data: Mapping[str, Any]) -> CallToolResult:
    """A successful tool result: ``data`` as structured content and as compact JSON text."""
    body = dict(data)
    return CallToolResult(
        content=[TextContent(type="text", text=compact(body))], structured_content=body
    )


def problem_data(exc: DetenteError) -> dict[str, Any]:
    """The error's data: ``{code, detail, next, ...extra}`` (``current`` last: it is long)."""
    problem = exc.to_problem()
    data: dict[str, Any] = {"code": problem.pop("code"), "detail": problem.pop("detail")}
    hint = NEXT_BY_CODE.get(str(data["code"]))
    if hint is not None:
        data["next"] = hint
    problem.pop("status", None)
    current = problem.pop("current", None)
    data.update(problem)
    if current is not None:
        data["current"] = current
    return data


def failure(exc: DetenteError) -> CallToolResult:
    """A tool execution error (``isError: true``) carrying :func:`problem_data`."""
    data = problem_data(exc)
    return CallToolResult(
        content=[TextContent(type="text", text=compact(data))],
        structured_content=data,
        is_error=True,
    )
