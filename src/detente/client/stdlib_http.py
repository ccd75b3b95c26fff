"""A small HTTP client of a detente server on the standard library: a plain socket for
``http://`` (:mod:`detente.client.plain_http`), :mod:`http.client` for ``https://``.

The git hooks start a Python process per ``git commit``: importing ``httpx`` costs them
about 0.1 s (its package imports its command line, and with it ``click`` and ``rich``),
more than the whole check. :class:`StdlibHttpClient` carries the same operations with one
connection per request and decodes problems exactly as
:class:`~detente.client.http.HttpClient` does (:func:`detente.client.problems.error_from_problem`).
It does not follow the event stream (:meth:`StdlibHttpClient.watch` raises), and it
carries a bearer token (``DETENTE_TOKEN``) but not a signature: :func:`light_client`
returns the ``httpx`` client when the environment holds a signing key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode, urlsplit

from detente.client.base import Call, Follow, Wire
from detente.client.credentials import KEY_ENV, KEY_ID_ENV, TOKEN_ENV
from detente.client.problems import ServerUnavailable, error_from_problem
from detente.client.protocol import Client
from detente.client.sse import SseMessage
from detente.errors import DetenteError, ValidationError

__all__ = ["REQUEST_TIMEOUT", "StdlibHttpClient", "light_client"]

#: Seconds one request may take unless its route says otherwise (as the httpx client).
REQUEST_TIMEOUT = 30.0


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
        host, port = self._parts.hostname or "127.0.0.1", self._parts.port
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        try:
            if self._parts.scheme == "https":
                return _https(host, port, method, path, headers, body, timeout)
            # Plain http: one exchange on a socket, without http.client's ssl and email
            # imports (detente.client.plain_http).
            from detente.client.plain_http import exchange

            return exchange(host, port or 80, method, path, headers, body, timeout)
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

    def _follow(self, position: int, repo: str | None, options: Follow) -> Iterator[SseMessage]:
        raise ValidationError(
            "following the event stream needs the httpx client (detente.client.http)",
            field="server",
        )


def _https(
    host: str,
    port: int | None,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes | None,
    timeout: float,
) -> tuple[int, bytes]:
    """One request over TLS with :mod:`http.client` (its errors as :class:`OSError`)."""
    import http.client

    conn = http.client.HTTPSConnection(host, port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    except http.client.HTTPException as exc:
        raise OSError(str(exc)) from None
    finally:
        conn.close()
