"""What an operation is: :class:`Operation`, declared once per operation.

A declaration names everything an operation is, and everything else is derived from it:

- its HTTP ``method`` and ``path`` template (the HTTP routes register them,
  :class:`~detente.client.http.HttpClient` fills them in);
- its ``handler`` (the function that meets the service); the handler's parameters are
  the operation's path parameters, query parameters and request body (a parameter named
  ``body``, annotated with its pydantic model), its return annotation the record it
  answers; the HTTP routes take their signature from it, the in-process transport its
  body model (:meth:`Operation.body_model`);
- who may call it (``rule``, :mod:`detente.operations.authorize`), as whom a human
  decision is recorded (``bind``), its rate limit (``limit``, a ``[limits]`` action);
- the refusals its decision can answer beyond every operation's (``conflicts``: the
  ``409`` codes; ``refuses``: a ``403`` of the decision itself), which the OpenAPI
  document lists (:mod:`detente.api.error_docs`).

Importing this module (and the catalog, :mod:`detente.operations.catalog`) loads neither
pydantic nor the records nor the service: a remote CLI reads paths from it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["BODY_MODULES", "Bind", "Operation", "Rule"]

#: The record an operation answers (:mod:`detente.operations.wire`).
R = TypeVar("R")

#: Who may call: ``(service, principal, *arguments) -> None``, raising ``forbidden``.
Rule = Callable[..., None]

#: The acting principal's part of a body: ``(service, principal, *arguments) -> body``.
Bind = Callable[..., Any]

#: The module each alias of a handler's ``body`` annotation names (``b.ClaimIn``...).
BODY_MODULES: dict[str, str] = {
    "b": "detente.operations.bodies",
    "g": "detente.operations.gate_bodies",
    "mb": "detente.operations.memory_bodies",
    "ab": "detente.operations.agent_bodies",
    "ib": "detente.operations.index_bodies",
    "rb": "detente.operations.resource_bodies",
}


class Operation(NamedTuple, Generic[R]):
    """One operation, typed by the record it answers (``Operation[wire.ClaimView]``...).

    Attributes:
        name: the operation's name (the OpenAPI ``operationId``, the MCP and CLI name).
        method: the HTTP method.
        path: the path template, e.g. ``/v1/claims/{claim_id}/renew``; its parameters
            are named like the handler's.
        handler: ``(service, *arguments) -> record``; None for the operations only an
            adapter answers (the event stream, the health probe's liveness).
        rule: who may call it (None: any principal; only the health probe has none,
            reads need ``read``); ``admin`` passes every rule.
        bind: rewrites the body with the acting principal (a human decision is recorded
            under the caller's name, never the name the body gives).
        limit: the ``[limits]`` action that counts the calls (None: unlimited).
        conflicts: the ``409`` codes its decision can raise.
        refuses: its decision itself can refuse with ``403 forbidden``.
        status_code: the HTTP status of success (201 where the operation creates).
        read_timeout: seconds a client waits for an answer that may take long (None:
            the client's default).
        http: ``"declared"``: the HTTP route is derived from the handler;
            ``"custom"``: the HTTP adapter writes it (bounds on queries, streams).
        tags: the OpenAPI tags of its HTTP route.
    """

    name: str
    method: str
    path: str
    handler: Callable[..., R] | None = None
    rule: Rule | None = None
    bind: Bind | None = None
    limit: str | None = None
    conflicts: tuple[str, ...] = ()
    refuses: bool = False
    status_code: int = 200
    read_timeout: float | None = None
    http: str = "declared"
    tags: tuple[str, ...] = ()

    @property
    def writes(self) -> bool:
        """Whether the operation may change state (every method but ``GET``)."""
        return self.method != "GET"

    def body_model(self) -> type[BaseModel] | None:
        """The pydantic model of the request body, or None when the operation takes none.
        Only the model's own module is imported, on first use."""
        return _body_model(self.handler)


@functools.cache
def _body_model(handler: Callable[..., Any] | None) -> type[BaseModel] | None:
    if handler is None:
        return None
    import importlib
    import inspect

    parameter = inspect.signature(handler).parameters.get("body")
    if parameter is None:
        return None
    alias, _, name = str(parameter.annotation).partition(".")
    model: type[BaseModel] = getattr(importlib.import_module(BODY_MODULES[alias]), name)
    return model
