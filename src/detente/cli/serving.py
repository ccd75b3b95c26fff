"""Starting servers from the CLI: a socket bound up front (where ``detente serve`` may
listen is the rule of :mod:`detente.cli.auth_flags`), and the one door to the composition
root (:mod:`detente.server`) that builds the HTTP app and the MCP server: the CLI never
imports another adapter.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from detente.errors import ValidationError

if TYPE_CHECKING:
    import threading

    import uvicorn

    from detente.cli.auth_flags import Exposure
    from detente.client import Client
    from detente.security.authn import AuthGate
    from detente.service import Service

__all__ = ["bind", "make_server", "run_mcp_stdio", "serve", "start_in_thread"]


def serve(
    service: Service,
    sock: socket.socket,
    *,
    log_level: str = "info",
    max_body_bytes: int,
    exposure: Exposure | None = None,
    auth: AuthGate | None = None,
) -> None:
    """Serve the HTTP API (and MCP at ``/mcp``) on ``sock`` until SIGINT or SIGTERM.

    Args:
        exposure: TLS, proxy and origin settings (see :mod:`detente.cli.auth_flags`).
        auth: the authentication of every request; None: loopback principal ``local``.
    """
    from detente import server

    server.serve(
        service,
        sock=sock,
        log_level=log_level,
        max_body_bytes=max_body_bytes,
        auth=auth,
        allowed_origins=exposure.allowed_origins if exposure else (),
        tls=exposure.tls if exposure else None,
        behind_proxy=exposure.behind_proxy if exposure else False,
        hosts=exposure.hosts if exposure else None,
    )


def make_server(
    service: Service, *, sweep_interval: float, log_level: str = "info"
) -> uvicorn.Server:
    """A uvicorn server for ``service`` (not started; see :func:`detente.server.make_server`)."""
    from detente import server

    return server.make_server(service, sweep_interval=sweep_interval, log_level=log_level)


def start_in_thread(server: uvicorn.Server, sock: socket.socket) -> threading.Thread:
    """Run ``server`` on ``sock`` in a daemon thread; return once it serves (see
    :func:`detente.server.start_in_thread`; ``startup_failed`` names why it did not)."""
    from detente import server as root

    return root.start_in_thread(server, sock)


def run_mcp_stdio(client: Client) -> None:
    """Serve the MCP tools over stdin/stdout on ``client`` until stdin closes (blocking)."""
    from detente import server

    server.run_mcp_stdio(client)


def bind(host: str, port: int) -> tuple[socket.socket, str]:
    """Bind a listening TCP socket now, so a busy port is a clear error, not a log line.

    Args:
        host: the interface (checked by :func:`detente.cli.auth_flags.exposure`).
        port: the TCP port; 0 lets the OS choose.

    Returns:
        The bound, listening socket and the base URL it serves, e.g.
        ``http://127.0.0.1:7420``.

    Raises:
        ValidationError: ``validation_error`` (field ``port``) when the address is in use
            or cannot be bound.
    """
    if not 0 <= port <= 65535:
        raise ValidationError(f"port must be between 0 and 65535, got {port}", field="port")
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    address = "127.0.0.1" if host == "localhost" else host.strip("[]")
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ValidationError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}", field="port", value=port
        ) from None
    bound = sock.getsockname()[1]
    shown = f"[{address}]" if family == socket.AF_INET6 else address
    return sock, f"http://{shown}:{bound}"
