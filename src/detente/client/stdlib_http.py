"""A small HTTP client of a detente server on the standard library's :mod:`http.client`.

The git hooks start a Python process per ``git commit``: importing ``httpx`` costs them
about 0.1 s (its package imports its command line, and with it ``click`` and ``rich``),
more than the whole check. :class:`StdlibHttpClient` carries the same operations over one
kept-alive connection (HTTP/1.1 persistent connections, RFC 9112 section 9.3: the
several requests of one hook call share one TCP connection) and decodes problems exactly
as :class:`~detente.client.http.HttpClient` does
(:func:`detente.client.problems.error_from_problem`).
It does not follow the event stream (:meth:`StdlibHttpClient.watch` raises), and it
carries a bearer token (``DETENTE_TOKEN``) but not a signature: :func:`light_client`
returns the ``httpx`` client when the environment holds a signing key.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from detente.client.base import Call, Follow, Wire
from detente.client.credentials import KEY_ENV, KEY_ID_ENV, TOKEN_ENV
from detente.client.problems import ServerUnavailable, error_from_problem
from detente.client.protocol import Client
from detente.errors import DetenteError, ValidationError

if TYPE_CHECKING:
    from http.client import HTTPConnection

    from detente.client.sse import SseMessage

__all__ = ["REQUEST_TIMEOUT", "StdlibHttpClient", "light_client"]

#: Seconds one request may take unless its route says otherwise (as the httpx client).
REQUEST_TIMEOUT = 30.0
#: Seconds a kept-alive connection may idle and still be reused: well under the time a
#: server keeps an idle connection open (uvicorn's default is 5 s), so a request is not
#: sent on a connection the server is closing.
REUSE_IDLE = 1.0
#: Methods sent again, once, on a new connection when a reused one turns out closed
#: (safe methods, RFC 9110 section 9.2.1: a request the server may have acted on is not
#: repeated).
_RESENT = ("GET", "HEAD")
#: :mod:`http.client` as loaded for plain ``http://`` servers (see :func:`_http_client`).
_PLAIN: ModuleType | None = None


def _http_client(https: bool) -> ModuleType:
    """:mod:`http.client`, loaded without :mod:`ssl` when only plain HTTP is needed.

    ``http.client`` imports ``ssl`` at its top only to define ``HTTPSConnection``;
    loading OpenSSL is about 4 ms of a harness hook call's 100 ms budget (#31) against a
    server on ``http://127.0.0.1``. For a plain server, in a process that has not loaded
    either module, a private copy is imported with ``ssl`` marked absent (a ``None`` entry
    in :data:`sys.modules` makes its import raise ``ImportError``, which ``http.client``
    expects), and both entries are removed again at once: every other import of
    ``http.client`` in the process, this client's ``https://`` connections included, loads
    the whole module as usual. Once made, the copy serves every plain connection, so a
    connection and the exceptions caught around it always come from one module. (The
    light client runs in hook processes, which import on one thread.)
    """
    global _PLAIN
    if not https and _PLAIN is None and not {"http.client", "ssl"} & sys.modules.keys():
        sys.modules["ssl"] = None  # type: ignore[assignment]
        try:
            import http.client as plain
        finally:
            del sys.modules["ssl"]
            sys.modules.pop("http.client", None)
        _PLAIN = plain
    if not https and _PLAIN is not None:
        return _PLAIN
    import http.client

    return http.client


def light_client(url: str) -> Client:
    """The cheapest client of the server at ``url`` that carries this environment's
    credentials: :class:`StdlibHttpClient`, or the ``httpx`` client when requests must be
    signed (``DETENTE_KEY``/``DETENTE_KEY_ID``, RFC 9421).

    Raises:
        ValidationError: ``validation_error`` for a URL that is not ``http(s)://host[:port]``
            or unusable credentials.
    """
    if os.environ.get(KEY_ENV) or os.environ.get(KEY_ID_ENV):
        from detente.client.http import HttpClient

        return HttpClient.to(url)
    return StdlibHttpClient(url, token=os.environ.get(TOKEN_ENV, "").strip() or None)


class StdlibHttpClient(Client):
    """The client of a detente server over :mod:`http.client` (no event stream).

    Args:
        url: the server's base URL, ``http://host:port`` or ``https://host:port``.
        token: a bearer token sent with every request, if any.
        timeout: seconds a request may take (a route's ``read_timeout`` wins).

    Raises:
        ValidationError: ``validation_error`` (field ``server``) for another kind of URL.
    """

    def __init__(self, url: str, *, token: str | None = None, timeout: float = REQUEST_TIMEOUT):
        super().__init__(mode="server")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValidationError(f"not a detente server URL: {url!r}", field="server")
        if token is not None and any(c in token for c in "\r\n\0"):
            raise ValidationError("the bearer token holds a line break", field="token")
        self._base = url.rstrip("/")
        self._parts = parts
        self._token = token
        self.timeout = timeout
        self._conn: HTTPConnection | None = None
        self._idle_since = 0.0

    def close(self) -> None:
        """Close the kept-alive connection (and whatever ``on_close`` owns). Idempotent."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        super().close()

    @property
    def url(self) -> str:
        """The server's base URL."""
        return self._base

    def _send(self, call: Call) -> Wire:
        from detente.client.http import _fill

        path = self._parts.path.rstrip("/") + _fill(call.route, call.path)
        if call.params:
            path += "?" + urlencode(call.params, doseq=True)
        body = json.dumps(dict(call.body)).encode() if call.body is not None else None
        status, payload = self._request(
            call.route.method, path, body, call.route.read_timeout or self.timeout
        )
        try:
            decoded: Any = json.loads(payload) if payload else {}
        except ValueError:
            decoded = None
        if status >= 300:
            problem = decoded if isinstance(decoded, dict) else {}
            if not problem.get("detail"):
                text = payload.decode(errors="replace").strip()[:200]
                problem = {**problem, "detail": f"HTTP {status} from the server: {text}"}
            raise error_from_problem(status, problem)
        if not isinstance(decoded, dict):
            raise DetenteError(f"unexpected response body from {self._base}{path}")
        return decoded

    def _request(
        self, method: str, path: str, body: bytes | None, timeout: float
    ) -> tuple[int, bytes]:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            return self._exchange(method, path, body, headers, timeout)
        except TimeoutError:
            raise ServerUnavailable(
                f"the detente server at {self._base} did not answer {method} {path} within "
                f"{timeout:g} s (it is reachable, but busy or stuck)",
                url=self._base,
            ) from None
        except OSError as exc:
            raise ServerUnavailable(
                f"cannot reach the detente server at {self._base}: {exc}", url=self._base
            ) from None

    def _exchange(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str], timeout: float
    ) -> tuple[int, bytes]:
        """One request on the kept-alive connection (a new one when there is none, or it
        idled longer than :data:`REUSE_IDLE`); a safe request that finds a reused
        connection closed is sent once more on a new one. :mod:`http.client`'s errors
        are raised as :class:`OSError`."""
        client = _http_client(self._parts.scheme == "https")
        conn = self._conn
        if conn is not None and time.monotonic() - self._idle_since > REUSE_IDLE:
            conn.close()
            conn = None
        reused = conn is not None
        self._conn = None
        while True:
            if conn is None:
                conn = self._connect(timeout)
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                payload = response.read()
            except (client.HTTPException, OSError) as exc:
                conn.close()
                conn = None
                stale = isinstance(
                    exc, (client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)
                )
                if reused and stale and method in _RESENT:
                    reused = False
                    continue
                if isinstance(exc, OSError):
                    raise
                raise OSError(str(exc)) from None
            if response.will_close:
                conn.close()
            else:
                self._conn, self._idle_since = conn, time.monotonic()
            return response.status, payload

    def _connect(self, timeout: float) -> HTTPConnection:
        https = self._parts.scheme == "https"
        client = _http_client(https)
        host, port = self._parts.hostname or "127.0.0.1", self._parts.port
        if https:
            made: HTTPConnection = client.HTTPSConnection(host, port, timeout=timeout)
        else:
            made = client.HTTPConnection(host, port, timeout=timeout)
        return made

    def _follow(self, position: int, repo: str | None, options: Follow) -> Iterator[SseMessage]:
        raise ValidationError(
            "following the event stream needs the httpx client (detente.client.http)",
            field="server",
        )
