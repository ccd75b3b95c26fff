"""The MCP edge's error mapping for what happens before and around a tool body.

:mod:`detente.mcp_server.results` turns a :class:`~detente.errors.DetenteError` raised by
a tool body into a tool error ``{code, detail, next, ...}``. This module covers the rest,
so every answer an agent gets carries a ``code`` and a ``next`` step:

=========================================  ===================  ============================
what                                       answer               ``code``
=========================================  ===================  ============================
arguments fail the tool's schema (missing  tool error           ``validation_error``
``session_id``, a wrong type, a TTL out                         (``field``, ``errors``)
of range, an argument the tool does not
have)
unknown tool name                          tool error           ``not_found``
a tool body raised something unexpected    tool error (logged)  ``internal_error``
                                                                (``incident``)
a stdio line that is not JSON              JSON-RPC error       ``-32700`` parse error
a stdio line that is JSON but no JSON-RPC  JSON-RPC error       ``-32600`` invalid request
message, or that parsers may read
differently (see :mod:`.stdio_lines`)
=========================================  ===================  ============================

The SDK drops a malformed stdio line silently (a debug log line); a client waiting for
its answer would hang, so :class:`DetenteMCPServer` answers it, with the request's ``id``
whenever a lenient reading of the line finds one (``null`` only when none can be read,
as JSON-RPC 2.0 requires). Streamable HTTP answers malformed
bodies with JSON-RPC errors already (HTTP 400).
"""

from __future__ import annotations

import json
import logging
import sys
import uuid
from typing import Any, cast

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    InputRequiredResult,
    JSONRPCError,
)
from pydantic import ValidationError as PydanticValidationError

from detente.errors import DetenteError, NotFoundError, ValidationError
from detente.mcp_server.results import failure
from detente.mcp_server.stdio_lines import INVALID_REQUEST, StrictLines

__all__ = ["INVALID_REQUEST", "DetenteMCPServer", "argument_error"]


_log = logging.getLogger("detente.mcp")


class InternalError(DetenteError):
    """A tool body raised an exception nobody translated (logged with ``incident``)."""

    code = "internal_error"


def argument_error(tool: str, exc: PydanticValidationError) -> ValidationError:
    """The tool arguments' schema failure as a ``validation_error`` naming each field.

    Args:
        tool: the tool's name.
        exc: pydantic's error from validating the arguments.

    Returns:
        The error; ``field`` is the first failing argument, ``errors`` lists all of
        them as ``{field, msg}``.
    """
    errors = [
        {"field": ".".join(str(p) for p in err["loc"]) or "arguments", "msg": err["msg"]}
        for err in exc.errors()
    ]
    first = errors[0] if errors else {"field": "arguments", "msg": "invalid arguments"}
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return ValidationError(
        f"{tool}: {first['field']}: {first['msg']}{more}", field=first["field"], errors=errors
    )


class DetenteMCPServer(MCPServer[Any]):
    """``MCPServer`` whose every failure is a detente problem or a JSON-RPC error."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Call a tool; failures outside its body become detente tool errors (see above)."""
        unknown = self._unknown_arguments(name, arguments)
        if unknown is not None:
            return failure(unknown)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            incident = uuid.uuid4().hex[:12]
            _log.error(
                "tool %s raised an unexpected error (incident %s)",
                name,
                incident,
                exc_info=exc.__cause__ or exc,
                extra={"tool": name, "incident": incident},
            )
            return failure(
                InternalError(
                    f"{name}: unexpected server error (incident {incident}); the server log "
                    "has the details",
                    incident=incident,
                )
            )
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, PydanticValidationError):
                return failure(argument_error(name, cause))
            if self._tool_manager.get_tool(name) is None:
                known = ", ".join(sorted(t.name for t in await self.list_tools()))
                return failure(
                    NotFoundError(
                        f"no tool named {name!r}; tools: {known}",
                        next="call one of the listed tools (tools/list describes them)",
                    )
                )
            raise

    def _unknown_arguments(self, name: str, arguments: dict[str, Any]) -> ValidationError | None:
        """``validation_error`` naming the arguments ``name``'s schema does not list, as the
        HTTP API refuses unknown fields: a misspelled optional argument (``sesion_id``)
        would otherwise be dropped and the call do something else than asked."""
        tool = self._tool_manager.get_tool(name)
        if tool is None or not isinstance(arguments, dict):
            return None
        known = tool.parameters.get("properties", {})
        unknown = sorted(str(k) for k in arguments if k not in known)
        if not unknown:
            return None
        return ValidationError(
            f"{name}: unknown argument{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))}; its arguments are {', '.join(sorted(known))}",
            field=unknown[0],
            errors=[{"field": k, "msg": "Extra inputs are not permitted"} for k in unknown],
        )

    async def run_stdio_async(self) -> None:
        """Serve over stdio, answering every malformed line with a JSON-RPC error."""
        # Every line is read strictly first (:mod:`detente.mcp_server.stdio_lines`); the
        # SDK fails on each line refused there, answered with that line's error and id.
        lines = StrictLines(anyio.wrap_file(sys.stdin.buffer))
        async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (
            read_stream,
            write_stream,
        ):
            checked_writer, checked_reader = anyio.create_memory_object_stream[
                SessionMessage | Exception
            ](0)

            async def sift() -> None:
                async with checked_writer:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            error = lines.errors.pop(0) if lines.errors else _malformed(item)
                            await write_stream.send(SessionMessage(error))
                        else:
                            await checked_writer.send(item)

            async with anyio.create_task_group() as tg:
                tg.start_soon(sift)
                await self._lowlevel_server.run(
                    checked_reader,
                    write_stream,
                    self._lowlevel_server.create_initialization_options(),
                )
                tg.cancel_scope.cancel()


def _malformed(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error for a line the transport could not read as a message."""
    text = str(exc)
    if isinstance(exc, PydanticValidationError):
        not_json = any(err.get("type") == "json_invalid" for err in exc.errors())
    else:
        not_json = isinstance(exc, json.JSONDecodeError)
    if not_json:
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not valid JSON")
    elif isinstance(exc, PydanticValidationError):
        error = ErrorData(
            code=INVALID_REQUEST,
            message="Invalid Request: the line is JSON but not a JSON-RPC 2.0 message",
            data={"errors": [str(e.get("msg")) for e in exc.errors()][:5]},
        )
    else:
        error = ErrorData(code=INTERNAL_ERROR, message=f"the message could not be read: {text}")
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)
