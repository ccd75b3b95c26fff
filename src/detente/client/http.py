"""The HTTP implementation of the client: every operation is one request to a server.

One ``httpx.Client`` (``base_url`` set) carries every request. A non-2xx
``application/problem+json`` becomes the :mod:`detente.errors` exception of its ``code``
(:mod:`detente.client.problems`); an unreachable server becomes
:class:`~detente.client.problems.ServerUnavailable` (code ``server_unavailable``). The
event stream is read with httpx-sse and resumed with ``Last-Event-ID`` after a drop.

``httpx`` and ``httpx_sse`` are imported lazily so that ``detente --help`` stays fast.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from detente.client.base import Call, Follow, Wire
from detente.client.problems import ServerUnavailable, decode, error_from_response
from detente.client.protocol import Client
from detente.client.sse import SseMessage
from detente.errors import ValidationError
from detente.operations import system as routes
from detente.operations.declaration import Operation

if TYPE_CHECKING:
    import httpx

__all__ = ["REQUEST_TIMEOUT", "HttpClient"]

#: Seconds one request may take (the default timeout of the ``httpx.Client``).
REQUEST_TIMEOUT = 30.0


class HttpClient(Client):
    """The client of a detente server.

    Args:
        http: the transport, its ``base_url`` the server's (closed by :meth:`close`).
        repo_name: the name the server knows the current repository by, if any.
        repo_path: top level of the current repository's working tree, if any.
        on_close: called once by :meth:`close`.
    """

    def __init__(
        self,
        http: httpx.Client,
        *,
        repo_name: str | None = None,
        repo_path: Path | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(mode="server", repo_name=repo_name, repo_path=repo_path, on_close=on_close)
        self.http = http

    @classmethod
    def to(cls, url: str, *, repo_name: str | None = None) -> HttpClient:
        """A client of the server at ``url`` (e.g. ``http://127.0.0.1:7420``).

        Only an ``https`` URL gets the certificate authorities loaded (about 0.1 s of CPU,
        paid by every CLI process otherwise): a plain ``http`` server never sees TLS, and
        requests only ever go to ``url`` (no redirect is followed).

        Raises:
            ValidationError: ``validation_error`` for credentials in the environment that
                cannot be used (:func:`detente.client.credentials.credentials`).
        """
        import httpx

        from detente.client.credentials import credentials

        https = url.lower().startswith("https:")
        http = httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT, auth=credentials(), verify=https)
        return cls(http, repo_name=repo_name)

    @property
    def url(self) -> str:
        """The server's base URL."""
        return str(self.http.base_url).rstrip("/")

    def close(self) -> None:
        """Close the connection pool. Idempotent."""
        self.http.close()
        super().close()

    def _send(self, call: Call) -> Wire:
        import httpx

        url = _fill(call.route, call.path)
        json = dict(call.body) if call.body is not None else None
        read = call.route.read_timeout or REQUEST_TIMEOUT
        try:
            response = self.http.request(
                call.route.method,
                url,
                json=json,
                params=call.params or None,
                timeout=httpx.Timeout(REQUEST_TIMEOUT, read=read),
            )
        except httpx.ReadTimeout:
            raise ServerUnavailable(
                f"the detente server at {self.url} did not answer {call.route.method} "
                f"{url} within {read:g} s (it is reachable, but busy or stuck)",
                url=self.url,
            ) from None
        except httpx.TransportError as exc:
            raise ServerUnavailable(
                f"cannot reach the detente server at {self.url}: {exc}", url=self.url
            ) from None
        return decode(response)

    def _follow(self, position: int, repo: str | None, options: Follow) -> Iterator[SseMessage]:
        """Read ``GET /v1/events/stream``; reconnect with ``Last-Event-ID`` after a drop,
        and at once when the server ends the stream because its token expired (the
        client's auth then sends a fresh one: ``$DETENTE_TOKEN_FILE`` is read again)."""
        import httpx
        from httpx_sse import EventSource

        params: dict[str, str | int] = {"since": position}
        if repo:
            params["repo"] = repo
        timeout = httpx.Timeout(REQUEST_TIMEOUT, read=options.read_timeout)
        failing_since: float | None = None
        backoff = 0.1
        while True:
            headers = {"Accept": "text/event-stream", "Last-Event-ID": str(position)}
            try:
                with self.http.stream(
                    "GET", routes.EVENT_STREAM.path, params=params, headers=headers, timeout=timeout
                ) as response:
                    if response.status_code >= 300:
                        response.read()
                        raise error_from_response(response)
                    failing_since, backoff = None, 0.1
                    expired = False
                    for sse in EventSource(response).iter_sse():
                        if not sse.data and sse.event == "message":
                            continue  # a bare id or retry field: nothing to deliver
                        if sse.id.isdigit():
                            position = int(sse.id)
                        if sse.event == CREDENTIALS_EXPIRED:
                            expired = True  # the server ends the stream after it
                            continue
                        yield SseMessage(sse.id or None, sse.event, sse.data)
                if expired:  # at once, with the credentials' fresh token (auth flow)
                    if options.on_reconnect is not None:
                        options.on_reconnect(position, "the stream's token expired")
                    continue
                reason = "the server closed the stream"
            except httpx.TransportError as exc:
                reason = f"{type(exc).__name__}: {exc}"
            now = time.monotonic()
            failing_since = failing_since if failing_since is not None else now
            if now - failing_since > options.give_up_after:
                raise ServerUnavailable(
                    f"lost the event stream of {self.url} and could not reconnect for "
                    f"{options.give_up_after:.0f} s ({reason})",
                    url=self.url,
                    lastEventId=position,
                )
            if options.on_reconnect is not None:
                options.on_reconnect(position, reason)
            time.sleep(backoff)
            backoff = min(backoff * 2, 2.0)


#: The stream's last message when the token it was opened with expired.
CREDENTIALS_EXPIRED = "credentials_expired"

_SEGMENT = re.compile(r"[A-Za-z0-9_.@~:+-]+")  # RFC 3986 pchars that need no escaping


def _fill(route: Operation[Any], values: Mapping[str, str]) -> str:
    """The route's path with ``values`` filled in. Ids are opaque but never need escaping:
    one that does (empty, ``..``, ``?``, ``/``...) is a typo, not a request.

    Raises:
        ValidationError: ``validation_error`` naming the bad id.
    """
    for value in values.values():
        if not _SEGMENT.fullmatch(value) or value in (".", ".."):
            raise ValidationError(f"{value!r} is not a valid id", field="id")
    return route.path.format(**values)
