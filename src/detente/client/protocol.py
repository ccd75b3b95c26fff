"""The one client protocol: every operation the HTTP API offers, as typed methods.

:class:`Client` is abstract; pick an implementation (or let
:func:`~detente.client.connect.connect` pick one):

- :class:`~detente.client.http.HttpClient`: a detente server over HTTP (httpx; the event
  stream through httpx-sse);
- :class:`~detente.client.inprocess.InProcessClient`: a :class:`~detente.service.Service`
  in this process, called directly (no ASGI app, no JSON encoding).

Both take the same camelCase bodies, validate them with the same pydantic models
(:mod:`detente.operations.body`), answer the same API.md shapes and raise the same
:mod:`detente.errors` exceptions, so an adapter cannot tell them apart.
"""

from __future__ import annotations

from detente.client.agents import AgentOperations
from detente.client.claims import ClaimOperations
from detente.client.gates import GateOperations
from detente.client.index import IndexOperations
from detente.client.meetings import MeetingOperations
from detente.client.memory import MemoryOperations
from detente.client.resources import ResourceOperations
from detente.client.system import SystemOperations

__all__ = ["Client"]


class Client(
    ClaimOperations,
    MeetingOperations,
    AgentOperations,
    MemoryOperations,
    GateOperations,
    SystemOperations,
    IndexOperations,
    ResourceOperations,
):
    """One method per API operation, returning the decoded JSON object.

    Attributes:
        mode: ``"server"`` or ``"local"``.
        repo_name: the name the detente knows the current repository by, if any.
        repo_path: top level of the current repository's working tree, if any.

    Every method raises the :mod:`detente.errors` exception named by a refusal's
    ``code`` and :class:`~detente.client.problems.ServerUnavailable` when a server
    cannot be reached.
    """
