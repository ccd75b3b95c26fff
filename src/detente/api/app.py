"""The HTTP API (API.md v1): claims, events (JSON and SSE), audit, repositories.

Routes are derived from the operations' declarations (:mod:`detente.operations`): FastAPI
parses the request with the operation's body model, the application layer
(:class:`~detente.operations.door.Operations`) authorizes, limits and makes the one
service call of the operation, which renders the wire shape. Errors become problem+json
through ``problems.py``. Service calls are synchronous; FastAPI runs plain ``def`` routes
in its threadpool. The MCP endpoint is mounted by the composition root
(:mod:`detente.server`), not here: no adapter imports another.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from detente import __version__
from detente.api import openapi, reference
from detente.api.access_log import AccessLogMiddleware
from detente.api.auth import (
    METADATA_PATH,
    AuthMiddleware,
    OriginMiddleware,
    protected_resource_metadata,
)
from detente.api.browser_headers import BrowserHeadersMiddleware
from detente.api.edges import (
    DEFAULT_MAX_BODY_BYTES,
    BodyLimitMiddleware,
    UnexpectedErrorMiddleware,
    http_error_handler,
    unexpected_error_handler,
)
from detente.api.hosts import HostCheckMiddleware
from detente.api.idempotency import IdempotencyMiddleware
from detente.api.problems import detente_error_handler, validation_error_handler
from detente.api.routes import claims, events, system
from detente.api.routes.operations import router as operations_router
from detente.api.server_send import App
from detente.api.supervision import supervisor_for
from detente.api.warmup import warm_routes
from detente.errors import DetenteError
from detente.operations.door import Operations
from detente.security.authn import AuthGate
from detente.security.hosts import HostPolicy
from detente.service import Service
from detente.service.warmup import warm
from detente.storage.ledger import ledger_for
from detente.storage.served import mark_served_with_auth


def create_app(
    service: Service,
    *,
    sweep_interval: float | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    auth: AuthGate | None = None,
    allowed_origins: Sequence[str] = (),
    operations: Operations | None = None,
    hosts: HostPolicy | None = None,
) -> FastAPI:
    """Build the ASGI app around ``service``.

    Args:
        service: the use cases.
        sweep_interval: seconds between background lease sweeps; None disables the
            sweeper (expiry still happens lazily on every read and write).
        max_body_bytes: the request body limit in bytes (``413 payload_too_large``
            beyond it; default 1 MiB).
        auth: the authentication of every non-public request; None: every caller is
            the loopback principal ``local`` with every role. With it, the app's start
            marks the store as served with authentication
            (:mod:`detente.storage.served`): local processes on it then hold only the
            roles of ``[local] roles``.
        allowed_origins: browser origins allowed to make state-changing requests
            besides the server's own (``403 forbidden`` for any other ``Origin``).
        operations: the application layer the routes call; default one over ``service``
            with ``auth``'s rate limiter. The composition root passes the instance the
            MCP endpoint calls too: one set of rules, one limiter for ``/v1`` and ``/mcp``.
        hosts: the host names answered to and the public origin (default: the loopback
            names only); any other ``Host`` is ``403 forbidden`` on every path, before
            routing (DNS rebinding).
    """
    policy = hosts if hosts is not None else HostPolicy()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Before the first request: its first command costs what every later one does.
        await asyncio.to_thread(warm, service)
        # A crash between a ref's compare-and-swap and its events: the landing recorded.
        await asyncio.to_thread(service.gates.recover_landings)
        # The log's anchor: fencing tokens above the newest checkpoint's, the head signed.
        await asyncio.to_thread(service.start_anchor)
        if auth is not None:
            # Local processes on this store now act only with [local] roles (their refusal
            # names --server and $DETENTE_TOKEN): see detente.operations.local_principal.
            schemes = [n for n, on in (("oidc", auth.oidc), ("keys", auth.keys)) if on]
            await asyncio.to_thread(
                mark_served_with_auth, service.store, schemes, service.clock.now()
            )
        await warm_routes(app)
        task: asyncio.Task[None] | None = None
        if sweep_interval is not None:
            interval = sweep_interval

            async def sweeper() -> None:
                # Any failure (store down, a bug) ends this run; the supervisor logs it
                # and restarts the sweeper with backoff (/healthz shows it meanwhile).
                while True:
                    await asyncio.to_thread(service.sweep)
                    await asyncio.sleep(interval)

            task = supervisor_for(service).start("sweeper", sweeper)
        yield
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        # A clean shutdown leaves a projection snapshot: the next start folds no long tail.
        await asyncio.to_thread(service.save_snapshots)
        await asyncio.to_thread(service.stop_anchor)  # the last checkpoint

    app = App(  # a FastAPI app that hands streams the server's send (see server_send)
        title="detente",
        version=__version__,
        summary="Coordination plane for AI coding agents: claims, leases, revisions, evidence.",
        lifespan=lifespan,
        docs_url=None,  # FastAPI's viewers load scripts from a CDN: see api/reference.py
        redoc_url=None,
    )
    app.state.service = service
    app.state.max_body_bytes = max_body_bytes
    app.add_exception_handler(DetenteError, detente_error_handler)
    app.add_exception_handler(RequestValidationError, validation_error_handler)
    app.add_exception_handler(StarletteHTTPException, http_error_handler)
    app.add_exception_handler(Exception, unexpected_error_handler)
    app.add_middleware(UnexpectedErrorMiddleware)  # innermost: the connection stays usable
    # Kept answers live in the store's replay ledger: a retry after a restart replays too.
    app.add_middleware(
        IdempotencyMiddleware,
        ledger=ledger_for(service.store),
        now=lambda: service.clock.now().timestamp(),
    )
    if auth is not None:  # inside the body limit: a signed body is read whole
        app.add_middleware(AuthMiddleware, gate=auth, hosts=policy)
    app.add_middleware(OriginMiddleware, allowed=tuple(allowed_origins), hosts=policy)
    app.state.auth = auth
    app.state.hosts = policy
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=max_body_bytes)
    app.add_middleware(HostCheckMiddleware, policy=policy)  # before any route or body read
    app.add_middleware(BrowserHeadersMiddleware)  # CSP and frame protection on every answer
    app.add_middleware(AccessLogMiddleware)  # outermost: it sees every answer, 413s too
    openapi.install(app)
    reference.install(app)

    if auth is not None:
        _serve_metadata(app, auth, policy)
    # Roles and ownership (all pass for ``local``), then the rate limits of an auth server.
    if operations is None:
        operations = Operations(service, limiter=auth.limiter if auth is not None else None)
    custom = {
        "health": system.health_route,
        "list_claims": claims.list_claims_route,
        "events": events.events_route,
        "event_stream": events.stream_route,
    }
    app.include_router(operations_router(operations, custom))
    return app


def _serve_metadata(app: FastAPI, gate: AuthGate, hosts: HostPolicy) -> None:
    """``GET /.well-known/oauth-protected-resource`` (public; see :mod:`detente.api.auth`)."""

    @app.get(METADATA_PATH, include_in_schema=False)
    def metadata(request: Request) -> dict[str, object]:
        return protected_resource_metadata(request.scope, gate, hosts)
