"""MCP over streamable HTTP at ``/mcp`` of the detente HTTP app.

:func:`mount` adds one route, ``/mcp``, to the FastAPI app and wraps the app's lifespan
so that the MCP session manager runs while the app runs. The MCP server is built over a
client made by the caller (the composition root, :mod:`detente.server`, gives an
in-process client of the app's own service) when the lifespan starts: an app used
without its lifespan never imports the MCP SDK, and answers ``/mcp`` with ``503``.

DNS-rebinding protection is on for a server without authentication: only ``127.0.0.1``,
``localhost`` and ``[::1]`` hosts and origins are accepted (such a server binds loopback
only). An authenticating server may listen anywhere: every ``/mcp`` request carries the
caller's token (which a rebound page cannot send) and foreign browser origins are refused
by the app's origin check.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

if TYPE_CHECKING:
    from fastapi import FastAPI

    from detente.client import Client

__all__ = ["MCP_PATH", "McpEndpoint", "mount"]

#: Where the streamable HTTP transport is served.
MCP_PATH = "/mcp"

_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"]
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


class McpEndpoint:
    """The ASGI app behind ``/mcp``: the SDK's streamable HTTP app once running."""

    def __init__(self, client_factory: Callable[[], Client], *, loopback_only: bool = True) -> None:
        self.client_factory = client_factory
        self.loopback_only = loopback_only
        self._app: ASGIApp | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Build the MCP server and run its session manager for the block's duration."""
        from mcp.server.transport_security import TransportSecuritySettings

        from detente.mcp_server.server import build_server

        server = build_server(self.client_factory())
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=self.loopback_only,
            allowed_hosts=_LOOPBACK_HOSTS,
            allowed_origins=_LOOPBACK_ORIGINS,
        )
        app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security)
        async with server.session_manager.run():
            self._app = app
            try:
                yield
            finally:
                self._app = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None:
            body = json.dumps(
                {
                    "type": "https://detente.dev/problems/server-unavailable",
                    "title": "MCP endpoint not running",
                    "status": 503,
                    "detail": "the MCP endpoint runs only inside a served app (detente serve)",
                    "code": "server_unavailable",
                }
            ).encode()
            headers = [(b"content-type", b"application/problem+json")]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self._app(scope, receive, send)


def mount(
    app: FastAPI, client_factory: Callable[[], Client], *, loopback_only: bool = True
) -> McpEndpoint:
    """Serve MCP (streamable HTTP) at ``/mcp`` of ``app``, its tools calling a client.

    Args:
        app: the detente HTTP app (its lifespan is wrapped, not replaced).
        client_factory: makes the client the tools call (once per lifespan start).
        loopback_only: refuse non-loopback ``Host``/``Origin`` (DNS-rebinding
            protection); False for an authenticating server.

    Returns:
        The endpoint (``running()`` is entered by the app's lifespan).
    """
    endpoint = McpEndpoint(client_factory, loopback_only=loopback_only)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint))
    inner: Callable[[Any], contextlib.AbstractAsyncContextManager[Any]] = (
        app.router.lifespan_context
    )

    @contextlib.asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncIterator[Any]:
        async with endpoint.running(), inner(asgi_app) as state:
            yield state

    app.router.lifespan_context = lifespan
    return endpoint
