"""A typed client of the detente HTTP API (API.md v1), shared by the CLI and the tests.

One code path for both modes: :func:`connect` returns a :class:`Client` over an
``httpx.Client`` that either talks to a running server (``--server URL``, ``$DETENTE_URL``,
or a server found on ``http://127.0.0.1:7420``) or, in *local mode*, to the same FastAPI app
built in-process on the repository's default SQLite store
(``starlette.testclient.TestClient``, an ``httpx.Client`` subclass).

Every method returns the response's JSON object. A non-2xx ``application/problem+json``
becomes the :mod:`detente.errors` exception of its ``code`` (the problem's other fields,
``current``, ``expected``, ``actual``, ``eventIds``, ``field``..., kept in ``.extra``); an
unreachable server becomes :class:`ServerUnavailable` (code ``server_unavailable``).

The modules:

- :mod:`~detente.cli.client.transport`: the ``httpx`` transport and the request path
  (problems into errors);
- :mod:`~detente.cli.client.claims`, :mod:`~detente.cli.client.meetings`,
  :mod:`~detente.cli.client.server`: the endpoints, by API area, as mixins of
  :class:`Client`;
- :mod:`~detente.cli.client.connection`: :class:`Client` itself and :func:`connect` (server
  discovery, local mode).

``httpx`` and the server stack are imported lazily so that ``detente --help`` stays fast.
"""

from __future__ import annotations

from detente.cli.client.connection import DEFAULT_URL, LOCAL_ENV, URL_ENV, Client, connect
from detente.cli.problems import ServerUnavailable, error_from_problem
from detente.cli.sse import SseMessage, iter_sse

__all__ = [
    "DEFAULT_URL",
    "LOCAL_ENV",
    "URL_ENV",
    "Client",
    "ServerUnavailable",
    "SseMessage",
    "connect",
    "error_from_problem",
    "iter_sse",
]
