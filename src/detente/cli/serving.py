"""Where ``detente serve`` may listen: loopback only, on a socket bound up front."""

from __future__ import annotations

import ipaddress
import socket

from detente.errors import ValidationError

__all__ = ["bind", "check_loopback"]


def check_loopback(host: str) -> None:
    """Refuse any host that is not a loopback interface.

    Authentication is not available yet, so the API must not be reachable from other
    machines.

    Raises:
        ValidationError: ``validation_error`` (field ``host``) for a non-loopback host.
    """
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValidationError(
            f"refusing to listen on {host!r}: authentication is not available yet, so detente "
            "only serves loopback interfaces (127.0.0.1, ::1, localhost)",
            field="host",
            value=host,
        )


def bind(host: str, port: int) -> tuple[socket.socket, str]:
    """Bind a listening TCP socket now, so a busy port is a clear error, not a log line.

    Args:
        host: a loopback host (see :func:`check_loopback`).
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
