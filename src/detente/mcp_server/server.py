"""The detente MCP server: advisory tools, protocol tools and resources over one client.

Build it with :func:`build_server` over a :class:`detente.client.Client`: an
:class:`~detente.client.inprocess.InProcessClient` (the repository's embedded store, see
:func:`detente.client.connect`) or an :class:`~detente.client.http.HttpClient` (a detente
server). ``detente mcp`` serves it over stdio (:func:`run_stdio`); ``detente serve``
mounts it at ``/mcp`` (see :mod:`detente.mcp_server.http` and :mod:`detente.server`).

Tools (descriptions are written for the agent that reads them):

- advisory: ``register_agent_work``, ``list_active_agents``, ``claim_files``,
  ``release_files``, ``verify_change_readiness``, ``reconcile_diff_intent``;
- index: ``symbols_touched``, ``search`` (:mod:`.index_tools`); ``claim_objective``
  (:mod:`.objective_tool`); ``claim_merge_check`` (:mod:`.merge_check_tool`);
- protocol: ``claim_open``, ``claim_status``, ``claim_check``, ``claim_renew``,
  ``claim_scope_add``, ``claim_scope_remove``, ``claim_complete``, ``claim_abandon``
  (:mod:`.protocol`); ``edit_check`` (:mod:`.edit_tool`); ``meeting_list``,
  ``meeting_resolve``, ``memory_sections``, ``memory_patch_section``, ``events_since``
  (:mod:`.records`);
- shared resources: ``resource_acquire``, ``resource_renew``, ``resource_release``,
  ``resource_status``, ``resource_next_number`` (:mod:`.resource_tools`).

Resources: ``detente://claims/live``, ``detente://activity/current``.

Errors are tool errors (``isError: true``) whose data is ``{code, detail, next, ...}``
(see :mod:`detente.mcp_server.results`), invalid arguments and unknown tools included; a
malformed message gets a JSON-RPC error (:mod:`detente.mcp_server.errors`).
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from detente import __version__
from detente.client import Client
from detente.clock import Clock, SystemClock
from detente.errors import StartupFailed
from detente.mcp_server import (
    advisory,
    edit_tool,
    index_tools,
    merge_check_tool,
    objective_tool,
    protocol,
    records,
    resource_tools,
    resources,
)
from detente.mcp_server.activity import Activity
from detente.mcp_server.errors import DetenteMCPServer
from detente.mcp_server.toolkit import ToolContext

__all__ = ["INSTRUCTIONS", "build_server", "run_stdio"]

#: What the server tells every client's model about how to use it.
INSTRUCTIONS = """\
detente coordinates the AI agents and humans editing this git repository at the same time.
1. At the start of a task call register_agent_work (agent_name, intent) and keep the
   returned sessionId: pass it as session_id to every detente tool.
2. Before editing files call verify_change_readiness, then claim_files for the paths or
   globs you will edit (with a reason). 'caution' means another session holds some of
   them: read who and why, then coordinate, wait, or choose other files. Nothing is locked.
3. Call release_files when you are done with files; re-register before your expiresAt.
4. Protocol tools (claim_open, claim_renew, ...) carry authority: every write names the
   revision you read; on revision_conflict read 'current' in the error and retry with it.
Errors carry a stable 'code' and a 'next' step."""


def build_server(
    client: Client, *, clock: Clock | None = None, activity: Activity | None = None
) -> MCPServer[Any]:
    """The MCP server over ``client``.

    Args:
        client: where the tools' calls go.
        clock: timestamps for the activity log; default the service's clock when the
            client is in-process, else the system clock.
        activity: the recent-calls buffer (a fresh one by default).

    Returns:
        The server, not running: serve it with :func:`run_stdio`, mount it with
        :mod:`detente.mcp_server.http`, or connect an in-process ``mcp.Client`` to it.
    """
    if clock is None:
        clock = getattr(client, "clock", None) or SystemClock()
    ctx = ToolContext(client=client, clock=clock, activity=activity or Activity())
    mcp: MCPServer[Any] = DetenteMCPServer(
        "detente",
        title="detente: coordination for coding agents",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
    )
    advisory.register(mcp, ctx)
    edit_tool.register(mcp, ctx)
    index_tools.register(mcp, ctx)
    objective_tool.register(mcp, ctx)
    merge_check_tool.register(mcp, ctx)
    protocol.register(mcp, ctx)
    records.register(mcp, ctx)
    resource_tools.register(mcp, ctx)
    resources.register(mcp, ctx)
    for tool in mcp._tool_manager.list_tools():
        # said in tools/list as it is enforced (DetenteMCPServer refuses unknown arguments)
        tool.parameters["additionalProperties"] = False
    return mcp


def run_stdio(client: Client) -> None:
    """Serve MCP over stdin/stdout until the client closes stdin (blocking).

    Nothing else may write to stdout meanwhile: it is the protocol channel.

    Raises:
        StartupFailed: ``startup_failed`` naming the cause when the server cannot be built.
    """
    try:
        server = build_server(client)
    except Exception as exc:
        client.close()
        raise StartupFailed.caused_by(exc, "the MCP server") from exc
    try:
        anyio.run(server.run_stdio_async)
    finally:
        client.close()
