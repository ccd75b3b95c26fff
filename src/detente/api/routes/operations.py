"""Every declared operation as an HTTP route: :func:`router`.

An operation's route is derived from its declaration
(:class:`~detente.operations.declaration.Operation`): its method and path, its status,
and the signature of its handler (path parameters, query parameters, the request body
and the record it answers, annotations resolved), whose docstring is the operation's
description. The endpoint hands FastAPI's arguments to the application layer
(:meth:`Operations.invoke <detente.operations.door.Operations.invoke>`), which
authorizes, limits and calls the handler. The few routes the HTTP adapter writes itself
(an operation declared ``http="custom"``: the health probe, the claim listing, the event
pages and stream) are given by ``custom``, at their place in the catalog's order.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import APIRouter

from detente.api.strict_route import StrictJsonRoute
from detente.operations import (
    agent_bodies,
    bodies,
    gate_bodies,
    index_bodies,
    memory_bodies,
    resource_bodies,
    wire,
)
from detente.operations.catalog import OPERATIONS
from detente.operations.declaration import Operation
from detente.operations.door import Operations

__all__ = ["Custom", "router"]

#: Registers one custom route on the router.
Custom = Callable[[APIRouter, Operations], None]

#: The names the handlers' annotations use (imported there only for type checking, so
#: the in-process client's reads import neither pydantic nor the records).
_NAMESPACE: dict[str, Any] = {
    "wire": wire,
    "b": bodies,
    "g": gate_bodies,
    "mb": memory_bodies,
    "ab": agent_bodies,
    "ib": index_bodies,
    "rb": resource_bodies,
}


def router(operations: Operations, custom: Mapping[str, Custom]) -> APIRouter:
    """Every operation of the catalog, in its order, as a route on one router.

    Args:
        operations: the application layer the endpoints call.
        custom: operation name -> what registers its route, for each operation declared
            ``http="custom"``.

    Raises:
        LookupError: a custom operation nobody registers.
    """
    r = APIRouter(route_class=StrictJsonRoute)
    for op in OPERATIONS:
        if op.http == "custom":
            custom[op.name](r, operations)
            continue
        r.add_api_route(
            op.path,
            _endpoint(operations, op),
            methods=[op.method],
            operation_id=op.name,
            status_code=op.status_code,
            tags=list(op.tags) or None,
        )
    return r


def _endpoint(operations: Operations, op: Operation[Any]) -> Callable[..., Any]:
    """A function with the signature of ``op``'s handler (annotations resolved, the
    service left out) that invokes ``op`` with its arguments in order."""
    handler = op.handler
    assert handler is not None, f"{op.name} is declared without a handler"
    parameters = list(inspect.signature(handler).parameters.values())[1:]
    hints = {
        name: _resolve(handler, annotation)
        for name, annotation in [(p.name, p.annotation) for p in parameters]
        + [("return", inspect.signature(handler).return_annotation)]
    }
    order = [p.name for p in parameters]

    def endpoint(**arguments: Any) -> Any:
        return operations.invoke(op, *(arguments[n] for n in order))

    endpoint.__name__ = op.name
    endpoint.__doc__ = handler.__doc__
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [p.replace(annotation=hints[p.name]) for p in parameters],
        return_annotation=hints["return"],
    )
    return endpoint


def _resolve(handler: Callable[..., Any], annotation: Any) -> Any:
    """An annotation of ``handler`` as an object (the service's, its first parameter's,
    is never resolved: the HTTP adapter does not import the service)."""
    if not isinstance(annotation, str):
        return annotation
    return eval(annotation, dict(handler.__globals__), _NAMESPACE)
