"""One client of detente for every adapter (CLI, MCP server, git hooks, dashboard).

:class:`Client` (:mod:`.protocol`) has one typed method per operation of the HTTP API
(API.md v1), each returning the API's camelCase JSON object, and two transports:

- :class:`~detente.client.http.HttpClient` (:mod:`.http`): a detente server over HTTP
  (httpx; the live event stream through httpx-sse, resumed with ``Last-Event-ID``), at
  the paths the operations declare (:mod:`detente.operations`);
- :class:`~detente.client.inprocess.InProcessClient` (:mod:`.inprocess`): the
  application layer in this process (:class:`~detente.operations.door.Operations`,
  which the HTTP routes call too), so an operation is authorized and meets the service
  in exactly one place.

:func:`connect` (:mod:`.connect`) picks one for a repository. Errors: the
:mod:`detente.errors` exception of a refusal's ``code`` either way (a server's problem
documents are decoded by :mod:`.problems`); ``server_unavailable``
(:class:`ServerUnavailable`) when a server cannot be reached.

The modules: :mod:`.base` (connection state, the two abstract methods), the operations
by area (:mod:`.claims`, :mod:`.meetings`, :mod:`.agents`, :mod:`.memory`, :mod:`.gates`,
:mod:`.system`, :mod:`.index`). The request bodies and the records are the application
layer's (:mod:`detente.operations.bodies`, :mod:`detente.operations.wire`). Importing
this package loads nothing: each name is imported on first use (neither httpx nor the
service stack unless needed).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Eager: ``connect`` is also a submodule's name, which importing the submodule would bind
# here (and the module is light: it imports the transports when it connects).
from detente.client.connect import DEFAULT_URL, LOCAL_ENV, URL_ENV, connect, open_local

if TYPE_CHECKING:
    from detente.client.base import Wire
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

#: Where each name lives: imported on first use, so that a module of this package (the
#: pre-commit guard's :mod:`.local_check`, :mod:`.connect`) does not load every operation.
_HOMES = {
    "Wire": "detente.client.base",
    "ServerUnavailable": "detente.client.problems",
    "error_from_problem": "detente.client.problems",
    "Client": "detente.client.protocol",
    "SseMessage": "detente.client.sse",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
