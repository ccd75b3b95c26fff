"""The composition root of a served detente: the HTTP API with MCP mounted at ``/mcp`` and
the dashboard at ``/``, under uvicorn.

It sits above the adapters: the HTTP app (:mod:`detente.api`) and the MCP server
(:mod:`detente.mcp_server`) never import each other; this module builds both over one
:class:`~detente.service.Service` (the MCP tools call it through an
:class:`~detente.client.inprocess.InProcessClient`) and joins them. ``detente serve`` and
``detente demo`` start it.
"""

from __future__ import annotations

import signal
import socket
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

    from detente.client import Client
    from detente.service import Service

__all__ = ["SWEEP_INTERVAL", "build_app", "make_server", "run_mcp_stdio", "serve"]

#: Seconds between background lease sweeps of a served app.
SWEEP_INTERVAL = 1.0


def build_app(service: Service, *, sweep_interval: float | None = None) -> FastAPI:
    """The served app: every API route, MCP (streamable HTTP) at ``/mcp``, the dashboard
    at ``/``.

    Args:
        service: the use cases.
        sweep_interval: seconds between background lease sweeps; None disables the
            sweeper (expiry still happens lazily on every read and write).

    Returns:
        The ASGI app; the MCP SDK is loaded when its lifespan starts.
    """
    from detente.api.app import create_app
    from detente.client.inprocess import InProcessClient
    from detente.dashboard import mount as mount_dashboard
    from detente.mcp_server.http import mount

    app = create_app(service, sweep_interval=sweep_interval)
    mount(app, lambda: InProcessClient(service))
    mount_dashboard(app, service)  # the live dashboard at / (its actions call /v1)
    return app


def make_server(
    service: Service,
    *,
    host: str = "127.0.0.1",
    port: int = 7420,
    sweep_interval: float = SWEEP_INTERVAL,
    log_level: str = "warning",
) -> uvicorn.Server:
    """A uvicorn server for ``service`` (not started).

    Args:
        service: the use cases to serve.
        host: interface to bind.
        port: TCP port (0 lets the OS choose; read it back from the socket you pass).
        sweep_interval: seconds between background lease sweeps.
        log_level: uvicorn's log level.

    Returns:
        The ``uvicorn.Server``; run it with ``server.run()`` (blocking, in any thread) and
        stop it with ``server.should_exit = True``.
    """
    import uvicorn

    config = uvicorn.Config(
        build_app(service, sweep_interval=sweep_interval),
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=2,
        lifespan="on",
    )
    return uvicorn.Server(config)


def serve(
    service: Service,
    *,
    host: str = "127.0.0.1",
    port: int = 7420,
    sweep_interval: float = SWEEP_INTERVAL,
    sock: socket.socket | None = None,
) -> None:
    """Serve the HTTP API until SIGINT or SIGTERM, then return after a graceful shutdown.

    Args:
        service: the use cases to serve.
        host: interface to bind (the CLI refuses non-loopback hosts).
        port: TCP port.
        sweep_interval: seconds between background lease sweeps.
        sock: an already bound listening socket to serve on instead of ``host:port``.
    """
    server = make_server(service, host=host, port=port, sweep_interval=sweep_interval)
    stops: list[int] = []
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to
        # the handler that was installed before it; this one turns that into a return.
        for sig in (signal.SIGINT, signal.SIGTERM):
            handlers[sig] = signal.signal(sig, lambda signum, _frame: stops.append(signum))
    try:
        server.run(sockets=[sock] if sock is not None else None)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def run_mcp_stdio(client: Client) -> None:
    """Serve the MCP tools over stdin/stdout, calling ``client``, until stdin closes.

    Nothing else may write to stdout meanwhile: it is the protocol channel. The client
    is closed at the end.
    """
    from detente.mcp_server.server import run_stdio

    run_stdio(client)
