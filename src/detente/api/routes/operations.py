"""Operations declared by their :class:`~detente.client.routes.Route` alone.

Most API operations are exactly one :class:`~detente.client.calls.ServiceCalls` method: the
path parameters, query parameters and request body are that method's parameters, the
answer is its return type, and its docstring is the operation's description. For those,
:func:`declare` registers the route from the table (:mod:`detente.client.routes`) instead
of a hand-written FastAPI function that forwards its arguments. The routers write by hand
only what differs (query validation with bounds, the event stream, the health probe).

The endpoint calls the method of the ``calls`` it was given (so
:class:`~detente.client.authorized.AuthorizedCalls` checks its rules) with the arguments
in the method's order, as a hand-written route would.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter

from detente.client import agent_bodies, bodies, gate_bodies, index_bodies, memory_bodies, wire
from detente.client.calls import ServiceCalls
from detente.client.routes import Route

__all__ = ["declare"]

#: The names the annotations of ``ServiceCalls`` use (imported there only for type
#: checking, so the in-process client's reads import neither pydantic nor the records).
_BODY_NAMESPACE: dict[str, Any] = {
    "wire": wire,
    "b": bodies,
    "g": gate_bodies,
    "mb": memory_bodies,
    "AgentIn": agent_bodies.AgentIn,
    "ReadinessIn": agent_bodies.ReadinessIn,
    "ReconcileIntentsIn": index_bodies.ReconcileIntentsIn,
}


def declare(r: APIRouter, calls: ServiceCalls, *operations: Route[Any]) -> None:
    """Register each operation on ``r``, answered by ``calls``' method of its name.

    Args:
        r: the router.
        calls: what answers (its method named ``route.name``).
        operations: the routes, registered in this order (FastAPI matches in order).
    """
    for route in operations:
        r.add_api_route(
            route.path,
            _endpoint(calls, route.name),
            methods=[route.method],
            operation_id=route.name,
            status_code=route.status_code,
        )


def _endpoint(calls: ServiceCalls, name: str) -> Callable[..., Any]:
    """A function with the signature of ``ServiceCalls.<name>`` (annotations resolved,
    ``self`` left out) that calls ``calls.<name>`` with its arguments in order."""
    method = getattr(type(calls), name)
    hints = typing.get_type_hints(method, localns=_BODY_NAMESPACE)
    parameters = list(inspect.signature(method).parameters.values())[1:]
    order = [p.name for p in parameters]

    def endpoint(**arguments: Any) -> Any:
        return getattr(calls, name)(*(arguments[n] for n in order))

    endpoint.__name__ = name
    endpoint.__doc__ = method.__doc__
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [p.replace(annotation=hints[p.name]) for p in parameters],
        return_annotation=hints["return"],
    )
    return endpoint
