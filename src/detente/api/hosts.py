"""The host check in front of every path (``/v1``, ``/mcp``, the dashboard, ``/docs``,
``/healthz``): a request whose ``Host`` is not one of the server's configured names
(:class:`~detente.security.hosts.HostPolicy`) is refused with ``403 forbidden`` before any
route, authentication or body read runs. This is what stops DNS rebinding against a
loopback server without authentication.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from detente.api.problems import problem
from detente.security.hosts import HostPolicy

__all__ = ["HostCheckMiddleware", "request_origin"]


def request_origin(scope: Scope, policy: HostPolicy) -> str:
    """The origin (``scheme://host[:port]``) ``scope``'s request was addressed to, by
    ``policy`` (see :meth:`HostPolicy.origin`); the request's ``Host`` was checked."""
    headers = Headers(scope=scope)
    server = scope.get("server")
    port = server[1] if isinstance(server, tuple | list) and len(server) == 2 else None
    host = headers.get("host")
    if host is None:
        host = server[0] if server else "localhost"
    return policy.origin(host, scheme=scope.get("scheme", "http"), port=port)


class HostCheckMiddleware:
    """Refuse requests addressed to a host name the server does not answer to.

    Args:
        app: the application.
        policy: the configured names.
    """

    def __init__(self, app: ASGIApp, *, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host")
        if self.policy.allows(host):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        wanted = "the loopback names" + (
            f" and {self.policy.public_name}" if self.policy.public_name else ""
        )
        response = problem(
            403,
            "forbidden",
            f"this server answers to {wanted}, not to Host {host!r} (a public name is "
            "added with detente serve --public-url)",
            field="host",
        )
        await response(scope, receive, send)
