"""The composition root of a served detente: the HTTP API with MCP mounted at ``/mcp`` and
the dashboard at ``/``, under uvicorn.

It sits above the adapters: the HTTP app (:mod:`detente.api`) and the MCP server
(:mod:`detente.mcp_server`) never import each other; this module builds both over one
:class:`~detente.service.Service` and one
:class:`~detente.operations.door.Operations` (the MCP tools call it through an
:class:`~detente.client.inprocess.InProcessClient`: the same rules and rate limits as
``/v1``, for the principal the request's credentials proved) and joins them. ``detente serve`` and
``detente demo`` start it.
"""

from __future__ import annotations

import gc
import signal
import socket
import threading
import weakref
from typing import TYPE_CHECKING

from detente.errors import StartupFailed
from detente.startup import StartupRecord, watch_lifespan

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import uvicorn
    from fastapi import FastAPI

    from detente.client import Client
    from detente.security.authn import AuthGate
    from detente.security.hosts import HostPolicy
    from detente.service import Service

__all__ = [
    "SWEEP_INTERVAL",
    "build_app",
    "make_server",
    "run_mcp_stdio",
    "serve",
    "start_in_thread",
    "startup_record",
]

#: Seconds between background lease sweeps of a served app.
SWEEP_INTERVAL = 1.0

#: Each server's start-up record (see :func:`startup_record`).
_RECORDS: weakref.WeakKeyDictionary[uvicorn.Server, StartupRecord] = weakref.WeakKeyDictionary()


def build_app(
    service: Service,
    *,
    sweep_interval: float | None = None,
    max_body_bytes: int | None = None,
    auth: AuthGate | None = None,
    allowed_origins: Sequence[str] = (),
    hosts: HostPolicy | None = None,
) -> FastAPI:
    """The served app: every API route, MCP (streamable HTTP) at ``/mcp``, the dashboard
    at ``/``.

    Args:
        service: the use cases.
        sweep_interval: seconds between background lease sweeps; None disables the
            sweeper (expiry still happens lazily on every read and write).
        max_body_bytes: the request body limit in bytes (default 1 MiB; ``/mcp`` too).
        auth: authentication of every request (``/v1``, ``/mcp``, the dashboard); None:
            every caller is principal ``local`` (a loopback-only server).
        allowed_origins: browser origins allowed to change state besides the server's.
        hosts: the host names answered to and the public origin (default: loopback names
            only; see :mod:`detente.security.hosts`).

    Returns:
        The ASGI app; the MCP SDK is loaded when its lifespan starts.
    """
    from detente.api.app import create_app
    from detente.api.edges import DEFAULT_MAX_BODY_BYTES
    from detente.client.inprocess import InProcessClient
    from detente.dashboard import mount as mount_dashboard
    from detente.mcp_server.http import mount
    from detente.operations.door import Operations

    limit = DEFAULT_MAX_BODY_BYTES if max_body_bytes is None else max_body_bytes
    # One door for /v1 and /mcp: the same rules, the same rate limiter, the principal the
    # request's credentials proved (bound by the auth middleware around both).
    operations = Operations(service, limiter=auth.limiter if auth is not None else None)
    app = create_app(
        service,
        sweep_interval=sweep_interval,
        max_body_bytes=limit,
        auth=auth,
        allowed_origins=allowed_origins,
        operations=operations,
        hosts=hosts,
    )
    mount(
        app,
        lambda: InProcessClient(service, operations=operations),
        loopback_only=auth is None,
    )
    # The live dashboard at / (its actions call /v1); with auth it asks for a token.
    mount_dashboard(app, operations, auth_required=auth is not None)
    return app


def make_server(
    service: Service,
    *,
    host: str = "127.0.0.1",
    port: int = 7420,
    sweep_interval: float = SWEEP_INTERVAL,
    log_level: str = "info",
    max_body_bytes: int | None = None,
    auth: AuthGate | None = None,
    allowed_origins: Sequence[str] = (),
    tls: tuple[Path, Path] | None = None,
    behind_proxy: bool = False,
    hosts: HostPolicy | None = None,
) -> uvicorn.Server:
    """A uvicorn server for ``service`` (not started).

    Args:
        service: the use cases to serve.
        host: interface to bind.
        port: TCP port (0 lets the OS choose; read it back from the socket you pass).
        sweep_interval: seconds between background lease sweeps.
        log_level: ``debug``, ``info`` (default: one access line per request),
            ``warning``, ``error`` or ``critical`` (see :mod:`detente.logs`).
        max_body_bytes: the request body limit in bytes (default 1 MiB).
        auth / allowed_origins / hosts: see :func:`build_app`.
        tls: ``(certificate, key)`` PEM files: serve HTTPS.
        behind_proxy: trust ``X-Forwarded-Proto``/``-For``/``-Host`` from any peer (the
            proxy in front terminates TLS); otherwise forwarded headers are ignored.

    Returns:
        The ``uvicorn.Server``; run it with ``server.run()`` (blocking, in any thread) and
        stop it with ``server.should_exit = True``. Whether it started, and the cause when
        it did not, is :func:`startup_record`'s (:func:`serve` and
        :func:`start_in_thread` raise it).
    """
    import uvicorn

    from detente import logs
    from detente.api.forwarded import ForwardedHostMiddleware

    logs.configure(log_level)
    app = build_app(
        service,
        sweep_interval=sweep_interval,
        max_body_bytes=max_body_bytes,
        auth=auth,
        allowed_origins=allowed_origins,
        hosts=hosts,
    )
    record = StartupRecord()
    app.router.lifespan_context = watch_lifespan(app.router.lifespan_context, record)
    config = uvicorn.Config(
        ForwardedHostMiddleware(app) if behind_proxy else app,
        host=host,
        port=port,
        log_level=log_level.lower(),
        log_config=None,  # detente.logs formats uvicorn's records too
        access_log=False,  # detente.access logs every request with its fields
        timeout_graceful_shutdown=2,
        lifespan="on",
        ssl_certfile=str(tls[0]) if tls else None,
        ssl_keyfile=str(tls[1]) if tls else None,
        proxy_headers=behind_proxy,
        forwarded_allow_ips="*" if behind_proxy else None,
    )
    server = uvicorn.Server(config)
    _RECORDS[server] = record
    return server


def startup_record(server: uvicorn.Server) -> StartupRecord:
    """The start-up record of a server made by :func:`make_server`."""
    return _RECORDS[server]


def start_in_thread(
    server: uvicorn.Server, sock: socket.socket, *, timeout: float = 120.0
) -> threading.Thread:
    """Run ``server`` on the listening ``sock`` in a daemon thread; return once it serves.

    Args:
        server: made by :func:`make_server`.
        sock: a bound, listening socket (:func:`detente.cli.serving.bind`).
        timeout: seconds its start-up (the warm-up) may take.

    Returns:
        The thread; stop the server with ``server.should_exit = True``, then join it.

    Raises:
        StartupFailed: ``startup_failed`` naming the cause when the server did not start
            (the thread has ended), or did not within ``timeout``.
    """
    record = startup_record(server)

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # uvicorn exits the process on some failures
            record.failed(exc)
        finally:
            record.finished()

    thread = threading.Thread(target=run, name="detente-server", daemon=True)
    thread.start()
    if not record.wait(timeout):
        server.should_exit = True
        raise StartupFailed(f"the server did not start within {timeout:g} s")
    record.raise_if_failed(server.started or thread.is_alive())
    return thread


def serve(
    service: Service,
    *,
    host: str = "127.0.0.1",
    port: int = 7420,
    sweep_interval: float = SWEEP_INTERVAL,
    sock: socket.socket | None = None,
    log_level: str = "info",
    max_body_bytes: int | None = None,
    auth: AuthGate | None = None,
    allowed_origins: Sequence[str] = (),
    tls: tuple[Path, Path] | None = None,
    behind_proxy: bool = False,
    hosts: HostPolicy | None = None,
) -> None:
    """Serve the HTTP API until SIGINT or SIGTERM, then return after a graceful shutdown.

    Args:
        service: the use cases to serve.
        host: interface to bind (the CLI refuses non-loopback hosts).
        port: TCP port.
        sweep_interval: seconds between background lease sweeps.
        sock: an already bound listening socket to serve on instead of ``host:port``.
        log_level: see :func:`make_server`.
        max_body_bytes / auth / allowed_origins / tls / behind_proxy / hosts: see
            :func:`make_server`.
    """
    server = make_server(
        service,
        host=host,
        port=port,
        sweep_interval=sweep_interval,
        log_level=log_level,
        max_body_bytes=max_body_bytes,
        auth=auth,
        allowed_origins=allowed_origins,
        tls=tls,
        behind_proxy=behind_proxy,
        hosts=hosts,
    )
    stops: list[int] = []
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to
        # the handler that was installed before it; this one turns that into a return.
        for sig in (signal.SIGINT, signal.SIGTERM):
            handlers[sig] = signal.signal(sig, lambda signum, _frame: stops.append(signum))
    _freeze_heap_after_startup(server)
    try:
        server.run(sockets=[sock] if sock is not None else None)
    except SystemExit:  # uvicorn exits when the lifespan (the warm-up) fails
        if server.started or stops:
            raise
        startup_record(server).raise_if_failed(started=False)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    if not stops:  # a signal before start-up is a stop, not a failure
        startup_record(server).raise_if_failed(server.started)


def _freeze_heap_after_startup(server: uvicorn.Server) -> None:
    """Once ``server`` has started (the app's lifespan has warmed the service), collect
    once and freeze the heap.

    Everything built by then (modules, the application, the service's projections and
    caches) lives as long as the process; frozen, a full collection no longer walks it.
    Full collections of a warm server's heap took 0.2 to 0.8 s on the 2-core development
    machine (``bench/watch.py`` with 1,000 subscribers), a pause that every request and
    every event stream waits through. Frozen objects are never collected, hence the
    collection first (see the ``gc.freeze`` documentation).
    """
    startup = server.startup

    async def startup_then_freeze(sockets: list[socket.socket] | None = None) -> None:
        await startup(sockets)
        gc.collect()
        gc.freeze()

    server.startup = startup_then_freeze  # type: ignore[method-assign]


def run_mcp_stdio(client: Client) -> None:
    """Serve the MCP tools over stdin/stdout, calling ``client``, until stdin closes.

    Nothing else may write to stdout meanwhile: it is the protocol channel. The client
    is closed at the end.

    Raises:
        StartupFailed: ``startup_failed`` naming the cause when the MCP server cannot start.
    """
    try:
        from detente.mcp_server.server import run_stdio
    except Exception as exc:  # the MCP SDK or a module of ours failed to import
        client.close()
        raise StartupFailed.caused_by(exc, "the MCP server") from exc
    run_stdio(client)
