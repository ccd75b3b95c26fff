"""The HTTP API (API.md v1): claims, events (JSON and SSE), audit, repositories.

Routes are thin: FastAPI parses the request with the client's body models
(:mod:`detente.client.body`), :class:`~detente.client.inprocess.ServiceCalls` makes the
one service call of the operation and renders the wire shape. Errors become problem+json
through ``problems.py``. Service calls are synchronous; FastAPI runs plain ``def`` routes
in its threadpool. The MCP endpoint is mounted by the composition root
(:mod:`detente.server`), not here: no adapter imports another.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError

from detente import __version__
from detente.api.problems import detente_error_handler, validation_error_handler
from detente.api.routes import (
    agents,
    claims,
    deployments,
    events,
    integration,
    meetings,
    memory,
    patches,
    system,
)
from detente.client.inprocess import ServiceCalls
from detente.errors import DetenteError
from detente.service import Service


def create_app(service: Service, *, sweep_interval: float | None = None) -> FastAPI:
    """Build the ASGI app around ``service``.

    Args:
        service: the use cases.
        sweep_interval: seconds between background lease sweeps; None disables the
            sweeper (expiry still happens lazily on every read and write).
    """

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()
        task: asyncio.Task[None] | None = None
        if sweep_interval is not None:

            async def sweeper() -> None:
                while not stop.is_set():
                    with contextlib.suppress(DetenteError):
                        await asyncio.to_thread(service.sweep)
                    await asyncio.sleep(sweep_interval)

            task = asyncio.create_task(sweeper())
        yield
        stop.set()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    app = FastAPI(
        title="detente",
        version=__version__,
        summary="Coordination plane for AI coding agents: claims, leases, revisions, evidence.",
        lifespan=lifespan,
    )
    app.state.service = service
    app.add_exception_handler(DetenteError, detente_error_handler)
    app.add_exception_handler(RequestValidationError, validation_error_handler)

    calls = ServiceCalls(service)
    areas = (system, claims, meetings, events, agents, memory)
    for area in (*areas, integration, patches, deployments):
        app.include_router(area.router(calls))
    return app
