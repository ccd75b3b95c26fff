"""One client of detente for every adapter (CLI, MCP server, git hooks, dashboard).

:class:`Client` (:mod:`.protocol`) has one typed method per operation of the HTTP API
(API.md v1), each returning the API's camelCase JSON object, and two implementations:

- :class:`~detente.client.http.HttpClient` (:mod:`.http`): a detente server over HTTP
  (httpx; the live event stream through httpx-sse, resumed with ``Last-Event-ID``);
- :class:`~detente.client.inprocess.InProcessClient` (:mod:`.inprocess`): a
  :class:`~detente.service.Service` in this process, called directly; its
  :class:`~detente.client.inprocess.ServiceCalls` is also what the HTTP routers call, so
  an operation meets the service in exactly one place.

:func:`connect` (:mod:`.connect`) picks one for a repository. Errors: the
:mod:`detente.errors` exception of a refusal's ``code`` either way (a server's problem
documents are decoded by :mod:`.problems`); ``server_unavailable``
(:class:`ServerUnavailable`) when a server cannot be reached.

The modules: :mod:`.routes` (every operation's method and path, named once),
:mod:`.base` (connection state, the two abstract methods), the operations by area
(:mod:`.claims`, :mod:`.meetings`, :mod:`.agents`, :mod:`.memory`, :mod:`.gates`,
:mod:`.system`), the request bodies (:mod:`.body`, :mod:`.bodies`,
:mod:`.evidence_bodies`, :mod:`.agent_bodies`, :mod:`.memory_bodies`, :mod:`.gate_bodies`).
Importing this package loads neither httpx nor the service stack.
"""

from __future__ import annotations

from detente.client.base import Wire
from detente.client.connect import DEFAULT_URL, LOCAL_ENV, URL_ENV, connect, open_local
from detente.client.problems import ServerUnavailable, error_from_problem
from detente.client.protocol import Client
from detente.client.sse import SseMessage

__all__ = [
    "DEFAULT_URL",
    "LOCAL_ENV",
    "URL_ENV",
    "Client",
    "ServerUnavailable",
    "SseMessage",
    "Wire",
    "connect",
    "error_from_problem",
    "open_local",
]
