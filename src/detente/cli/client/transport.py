"""The transport every endpoint area of :class:`~detente.cli.client.Client` is built on.

One ``httpx.Client`` (``base_url`` set) carries every request: a real one for a server, or
``starlette.testclient.TestClient`` over the in-process app in local mode. A non-2xx
``application/problem+json`` becomes the :mod:`detente.errors` exception of its ``code``
(mapped by :mod:`detente.cli.problems`); an unreachable server becomes
:class:`~detente.cli.problems.ServerUnavailable` (code ``server_unavailable``).

``httpx`` is imported lazily so that ``detente --help`` stays fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from detente.cli.problems import ServerUnavailable, decode
from detente.errors import ValidationError

if TYPE_CHECKING:
    import httpx

__all__ = ["REQUEST_TIMEOUT", "Transport"]

#: Seconds one request may take (the default timeout of the ``httpx.Client``).
REQUEST_TIMEOUT = 30.0


class Transport:
    """The connection and the request path shared by the endpoint areas.

    Args:
        http: the transport (``base_url`` set): an ``httpx.Client`` for a server, or a
            ``TestClient`` over the in-process app in local mode.
        mode: ``"server"`` or ``"local"`` (reported in ``--json`` output only).
        repo_name: the name the server knows the current repository by, if any.
        repo_path: top level of the current repository's working tree, if any.
        on_close: called once by :meth:`close` (local mode closes its store there).
    """

    def __init__(
        self,
        http: httpx.Client,
        *,
        mode: str = "server",
        repo_name: str | None = None,
        repo_path: Path | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.http = http
        self.mode = mode
        self.repo_name = repo_name
        self.repo_path = repo_path
        self._on_close = on_close

    @property
    def url(self) -> str:
        """The server's base URL (a placeholder host in local mode)."""
        return str(self.http.base_url).rstrip("/")

    def close(self) -> None:
        """Close the transport (and the local store). Idempotent."""
        self.http.close()
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(
        self,
        method: str,
        path: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Send one request; the decoded JSON object, or the problem's exception.

        ``None`` values in ``params`` are left out of the query string.
        """
        import httpx

        _check_path(path)
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            response = self.http.request(method, path, json=json, params=query or None)
        except httpx.TransportError as exc:
            raise ServerUnavailable(
                f"cannot reach the detente server at {self.url}: {exc}", url=self.url
            ) from None
        return decode(response)


_SEGMENT = re.compile(r"[A-Za-z0-9_.@~-]+")


def _check_path(path: str) -> None:
    """Refuse a URL path built from a malformed id (empty, ``..``, ``?``, ``/``...): ids
    are opaque, but they never need escaping, and one that does is a typo, not a request.

    Raises:
        ValidationError: ``validation_error`` naming the bad segment.
    """
    for segment in path.split("/")[1:]:
        if not _SEGMENT.fullmatch(segment) or segment in (".", ".."):
            raise ValidationError(f"{segment!r} is not a valid id", field="id")
