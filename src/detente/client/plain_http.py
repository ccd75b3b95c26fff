"""One HTTP/1.1 exchange over a plain TCP socket: what the light client sends to an
``http://`` server.

:mod:`http.client` imports :mod:`ssl` and the :mod:`email` parser (about 20 ms of a
harness hook that must answer in 100 ms); a request to a detente server on ``http://``
needs neither. :func:`exchange` writes one request with ``Connection: close`` and reads
the answer to the end of the stream: the status line, the headers, and the body as
``Content-Length`` or ``Transfer-Encoding: chunked`` (RFC 9112 sections 6 and 7.1) frame
it, or up to the end of the stream when neither does. ``https://`` goes through
:mod:`http.client` (:class:`~detente.client.stdlib_http.StdlibHttpClient`).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping

__all__ = ["MalformedResponse", "exchange"]

#: Largest header block read (the server's headers are a few hundred bytes).
_MAX_HEAD = 64 * 1024


class MalformedResponse(OSError):
    """The server's bytes are not an HTTP/1.x response (an :class:`OSError`: the caller
    reports the server unreachable, as it does a connection reset)."""


def exchange(
    host: str,
    port: int,
    method: str,
    target: str,
    headers: Mapping[str, str],
    body: bytes | None,
    timeout: float,
) -> tuple[int, bytes]:
    """Send one request and read its answer.

    Args:
        host: the server's host name or address.
        port: its TCP port.
        method: ``GET``, ``POST``...
        target: the path and query, e.g. ``/v1/claims?repo=demo``.
        headers: more request headers (``Host``, ``Connection`` and ``Content-Length``
            are written here).
        body: the request body, if any.
        timeout: seconds for the connection and for each read (the socket's timeout).

    Returns:
        ``(status code, body bytes)``.

    Raises:
        TimeoutError: the server did not answer within ``timeout``.
        OSError: the connection failed, or the answer is malformed (:class:`MalformedResponse`).
        ValueError: a header or the target holds a line break (never sent).
    """
    lines = [f"{method} {target} HTTP/1.1", f"Host: {_authority(host, port)}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body or b'')}")
    if any(c in line for line in lines for c in "\r\n\0"):
        raise ValueError("a request line or header holds a line break")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request)
        chunks = []
        while data := sock.recv(65536):
            chunks.append(data)
    return _parse(b"".join(chunks))


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _parse(raw: bytes) -> tuple[int, bytes]:
    """The status and the framed body of a whole response (see the module docstring)."""
    head, sep, rest = raw.partition(b"\r\n\r\n")
    if not sep or len(head) > _MAX_HEAD:
        raise MalformedResponse("the server's answer ended inside its headers")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    version, _, tail = status_line.partition(" ")
    code = tail[:3]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise MalformedResponse(f"not an HTTP/1.x status line: {status_line[:80]!r}")
    fields: dict[str, str] = {}
    for line in header_lines:
        name, colon, value = line.partition(":")
        if colon:
            fields[name.strip().lower()] = value.strip()
    status = int(code)
    if status in (204, 304) or 100 <= status < 200:
        return status, b""
    if "chunked" in fields.get("transfer-encoding", "").lower():
        return status, _unchunk(rest)
    length = fields.get("content-length")
    if length is not None:
        if not length.isdigit() or len(rest) < int(length):
            raise MalformedResponse("the server's answer is shorter than its Content-Length")
        return status, rest[: int(length)]
    return status, rest


def _unchunk(data: bytes) -> bytes:
    """The body of a chunked transfer coding (chunk extensions and trailers ignored)."""
    out = bytearray()
    at = 0
    while True:
        end = data.find(b"\r\n", at)
        if end < 0:
            raise MalformedResponse("the server's chunked answer ended inside a chunk size")
        size_text = data[at:end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise MalformedResponse(f"not a chunk size: {size_text[:20]!r}") from None
        if size == 0:
            return bytes(out)
        start = end + 2
        if len(data) < start + size + 2:
            raise MalformedResponse("the server's chunked answer ended inside a chunk")
        out += data[start : start + size]
        at = start + size + 2
