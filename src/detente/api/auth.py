"""Authentication and browser-origin checks in front of every route (``/v1``, ``/mcp``, ``/``).

:class:`AuthMiddleware` runs for every HTTP request of an authenticating server: it
builds what :class:`~detente.security.authn.AuthGate` reads (method, target URI, headers
and, for signed requests, the body, which it then replays to the app unchanged), lets the
gate prove the principal, and binds that principal
(:func:`~detente.security.identity.acting_as`) while the app handles the request, so the
service records it on every event and checks ownership against it. A refusal is
``401 unauthenticated`` (problem+json with ``WWW-Authenticate``); an OIDC issuer that
cannot be read is ``503 issuer_unavailable`` (with ``Retry-After``): the token was not
judged, so the client should retry rather than fetch a new one.

A few paths are public because they reveal nothing and a client needs them to find out
how to authenticate: :data:`PUBLIC_PATHS` (health, the OpenAPI document and its viewers,
the OAuth protected-resource metadata, the dashboard's static shell).

:class:`OriginMiddleware` refuses (``403 forbidden``) any state-changing request whose
``Origin`` header names another origin than the server's own or one of
``--allowed-origin`` (a browser page on another site must not drive the API with a
user's ambient credentials); requests without ``Origin`` (CLI, agents) pass.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from detente.api.body_replay import read_body, replaying
from detente.api.hosts import request_origin
from detente.api.problems import STATUS_BY_CODE, problem
from detente.errors import DetenteError, IssuerUnavailable, Unauthenticated
from detente.security.authn import AuthGate, HttpRequest
from detente.security.hosts import HostPolicy
from detente.security.identity import Principal, acting_as

__all__ = [
    "METADATA_PATH",
    "PUBLIC_PATHS",
    "AuthMiddleware",
    "OriginMiddleware",
    "protected_resource_metadata",
    "target_uri",
]

#: Paths served without credentials: exact paths, and prefixes ending in ``/``. The
#: dashboard's ``/`` is only its shell when authentication is on (it holds no record).
PUBLIC_PATHS = (
    "/",
    "/healthz",
    "/openapi.json",
    "/docs",
    "/redoc",
    "/.well-known/oauth-protected-resource",
    "/dashboard/config",
    "/dashboard/static/",
)
#: RFC 9728 protected-resource metadata (MCP authorization: how a client finds the issuer).
METADATA_PATH = "/.well-known/oauth-protected-resource"

#: The MCP endpoint and its session header (MCP streamable HTTP transport).
MCP_PATH = "/mcp"
MCP_SESSION_HEADER = "mcp-session-id"
#: MCP sessions whose owner is remembered (the oldest are forgotten first).
MAX_MCP_SESSIONS = 10_000

#: Methods that never change state (RFC 9110 "safe").
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _public(path: str) -> bool:
    return any(
        path.startswith(p) if len(p) > 1 and p.endswith("/") else path == p for p in PUBLIC_PATHS
    )


def target_uri(scope: Scope, hosts: HostPolicy | None = None) -> str:
    """The request's absolute URI (RFC 9421 ``@target-uri``) as this server's
    configuration names it: the origin is :func:`~detente.api.hosts.request_origin` (the
    configured public origin, or the loopback name at the listening port), never the
    port or scheme the client's ``Host`` claims; then the path and query as received.

    Behind a trusted proxy, uvicorn's ``--proxy-headers`` has already put the
    ``X-Forwarded-Proto``/``X-Forwarded-For`` values into ``scope``.
    """
    origin = request_origin(scope, hosts if hosts is not None else HostPolicy())
    path = str(scope.get("root_path", "")) + str(scope.get("path", "/"))
    raw = scope.get("raw_path")
    if isinstance(raw, bytes) and raw:
        path = raw.decode("latin-1")
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    return origin + path + (f"?{query}" if query else "")


class AuthMiddleware:
    """Authenticate every non-public HTTP request with ``gate`` (see the module docstring).

    Args:
        app: the application.
        gate: the enabled schemes and role table.
        hosts: the configured names and public origin (signed requests are checked
            against the origin they give, see :func:`target_uri`).
    """

    def __init__(self, app: ASGIApp, *, gate: AuthGate, hosts: HostPolicy | None = None) -> None:
        self.app = app
        self.gate = gate
        self.hosts = hosts if hosts is not None else HostPolicy()
        #: MCP session id -> the principal that opened it (most recent sessions kept).
        self._mcp_sessions: OrderedDict[str, str] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _public(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        body = b""
        replay = receive
        if self.gate.needs_body and ("signature" in headers or "signature-input" in headers):
            body = await read_body(receive)
            replay = replaying(body, receive)
        request = HttpRequest(
            method=scope.get("method", "GET").upper(),
            target_uri=target_uri(scope, self.hosts),
            headers={k: ", ".join(headers.getlist(k)) for k in dict.fromkeys(headers)},
            body=body,
        )
        try:
            # The first request fetches the issuer's keys (blocking IO): off the event loop.
            principal = await anyio.to_thread.run_sync(self.gate.authenticate, request)
        except Unauthenticated as exc:
            fields = exc.to_problem()
            response = problem(401, fields.pop("code"), fields.pop("detail"), **fields)
            challenge = exc.challenge
            if self.gate.oidc is not None and challenge.startswith("Bearer"):
                # RFC 9728 section 5.1: point the client at the resource metadata.
                metadata = _origin_of(request.target_uri) or ""
                bearer, sep, rest = challenge.partition(", Signature")
                challenge = f'{bearer}, resource_metadata="{metadata}{METADATA_PATH}"{sep}{rest}'
            response.headers["WWW-Authenticate"] = challenge
            await response(scope, replay, send)
            return
        except DetenteError as exc:  # the issuer or the store (replay ledger) is down: 503
            fields = exc.to_problem()
            code = fields.pop("code")
            response = problem(STATUS_BY_CODE.get(code, 500), code, fields.pop("detail"), **fields)
            if isinstance(exc, IssuerUnavailable):
                response.headers["Retry-After"] = str(exc.retry_after)
            await response(scope, replay, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        if scope.get("path") == MCP_PATH:
            await self._mcp(principal, headers, scope, replay, send)
            return
        with acting_as(principal):
            await self.app(scope, replay, send)

    async def _mcp(
        self, principal: Principal, headers: Headers, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """An MCP session belongs to the principal that opened it: the SDK runs a session's
        tool calls in the task its first request started, so another principal presenting
        the session id would act under the opener's name. Such a request is refused."""
        session = headers.get(MCP_SESSION_HEADER)
        owner = self._mcp_sessions.get(session) if session else None
        if owner is not None and owner != principal.name:
            response = problem(
                403,
                "forbidden",
                f"MCP session {session} belongs to another principal; open your own session",
                principal=principal.name,
            )
            await response(scope, receive, send)
            return

        async def remember(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", []):
                    if name.lower() == MCP_SESSION_HEADER.encode():
                        self._mcp_sessions[value.decode("latin-1")] = principal.name
                        while len(self._mcp_sessions) > MAX_MCP_SESSIONS:
                            self._mcp_sessions.popitem(last=False)
            await send(message)

        with acting_as(principal):
            await self.app(scope, receive, remember)


def _origin_of(url: str) -> str | None:
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower()


class OriginMiddleware:
    """Refuse state-changing browser requests from foreign origins (``403 forbidden``).

    Args:
        app: the application.
        allowed: origins (``scheme://host[:port]``) allowed besides the server's own.
        hosts: the configured names and public origin (the server's own origins).
    """

    def __init__(
        self, app: ASGIApp, *, allowed: Iterable[str] = (), hosts: HostPolicy | None = None
    ) -> None:
        self.app = app
        self.allowed = frozenset(o.rstrip("/").lower() for o in allowed)
        self.hosts = hosts if hosts is not None else HostPolicy()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method", "GET").upper() in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        origin = Headers(scope=scope).get("origin")
        if origin is None:
            await self.app(scope, receive, send)
            return
        own = request_origin(scope, self.hosts)
        mine = origin.rstrip("/").lower()
        if mine in (own, self.hosts.public_origin) or mine in self.allowed:
            await self.app(scope, receive, send)
            return
        response = problem(
            403,
            "forbidden",
            f"cross-origin request from {origin!r} refused: state-changing requests must "
            "come from the server's own origin or one given with --allowed-origin",
            origin=origin,
        )
        await response(scope, receive, send)


def protected_resource_metadata(
    scope: Scope, gate: AuthGate, hosts: HostPolicy | None = None
) -> dict[str, object]:
    """The RFC 9728 document of this server: the resource, its issuer, bearer in header.

    Args:
        scope: the request asking (its origin is the resource's).
        gate: the server's authentication (its OIDC issuer is the authorization server).
        hosts: the configured names and public origin.
    """
    origin = request_origin(scope, hosts if hosts is not None else HostPolicy())
    issuers = [gate.oidc.settings.issuer] if gate.oidc is not None else []
    return {
        "resource": origin,
        "authorization_servers": issuers,
        "bearer_methods_supported": ["header"],
        "resource_name": "detente",
    }
