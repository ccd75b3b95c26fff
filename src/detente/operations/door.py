"""The one door: :class:`Operations` runs a declared operation for whichever surface
called it (``/v1``, MCP over HTTP or stdio, the in-process client of the CLI and the
hooks, the dashboard's actions through ``/v1``).

Every call goes the same way: the acting principal (the request's, or the local
process's, asked before each write), then the operation's rule (``403 forbidden``,
nothing written; ``admin`` passes), its rate limit (``429 rate_limited``), the acting
principal's part of the body (a human decision is recorded under the caller's name), and
the handler, which meets the service. An HTTP route gives the arguments FastAPI parsed
(:meth:`Operations.invoke`); a transport gives the raw camelCase body, validated here with
the operation's model (:meth:`Operations.call`).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from detente.errors import ForbiddenError
from detente.operations.authorize import local_refusal, session_of
from detente.security.identity import Principal, acting_as, current_principal

if TYPE_CHECKING:
    from detente.operations.declaration import Operation
    from detente.security.ratelimit import RateLimiter
    from detente.service import Service

__all__ = ["Operations"]

R = TypeVar("R")
T = TypeVar("T")


class Operations:
    """The application layer over one service.

    Args:
        service: the use cases.
        limiter: the ``[limits]`` counts; None: unlimited.
        principal: asked before every write (not before reads): the principal the write
            is made as. A local process gives
            :func:`~detente.operations.local_principal.local_principal`, which raises
            ``forbidden`` on a store served with authentication. None: the principal
            already bound (a served app's request, :mod:`detente.security.identity`).
    """

    def __init__(
        self,
        service: Service,
        *,
        limiter: RateLimiter | None = None,
        principal: Callable[[], Principal] | None = None,
    ) -> None:
        self.service = service
        self.limiter = limiter
        self.principal = principal

    def invoke(self, op: Operation[R], /, *args: Any, **query: Any) -> R:
        """Run ``op`` with its handler's arguments (after the service), already parsed.

        Raises:
            ForbiddenError: ``forbidden``: the principal may not (nothing is written).
            RateLimited: ``rate_limited``: the principal's calls passed the limit.
            DetenteError: whatever the handler's decision raises.
        """
        if op.handler is None:
            raise LookupError(f"operation {op.name!r} has no handler: its adapter answers it")
        return self.run(op, op.handler, *args, **query)

    def run(self, op: Operation[Any], handler: Callable[..., T], /, *args: Any, **query: Any) -> T:
        """Run ``handler`` as operation ``op`` (its principal, rule, limit and binding):
        for an adapter that needs another shape of the same answer (the HTTP claim
        listing writes the records a chunk at a time, :func:`.claims.claim_page`).

        Raises:
            See :meth:`invoke`.
        """
        with self._acting(op):
            who = current_principal()
            self._check(op, who, args)
            if op.limit is not None and self.limiter is not None:
                self.limiter.check(op.limit, who.name, session_of(args[-1]) if args else None)
            if op.bind is not None:
                args = (*args[:-1], op.bind(self.service, who, *args))
            return handler(self.service, *args, **query)

    def authorize(self, op: Operation[Any], /, *args: Any) -> None:
        """Check ``op``'s rule for the acting principal without running it: for an
        adapter that answers the operation itself (the event stream).

        Raises:
            ForbiddenError: ``forbidden``: the principal may not.
        """
        with self._acting(op):
            self._check(op, current_principal(), args)

    def _check(self, op: Operation[Any], who: Principal, args: tuple[Any, ...]) -> None:
        if op.rule is None or who.has("admin"):
            return
        try:
            op.rule(self.service, who, *args)
        except ForbiddenError as exc:
            if who.via != "local":
                raise
            raise local_refusal(exc) from None

    def call(
        self,
        op: Operation[R],
        *,
        path: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> R:
        """Run ``op`` from a transport's values: path parameters, query parameters and
        the camelCase body, which is validated with the operation's model (a read never
        takes a body: it never imports pydantic).

        Raises:
            ValidationError: ``validation_error`` for a body the model refuses, or a
                parameter the operation does not take.
            ForbiddenError / RateLimited / DetenteError: see :meth:`invoke`.
        """
        if op.handler is None:
            raise LookupError(f"operation {op.name!r} has no handler: its adapter answers it")
        arguments: dict[str, Any] = {**(path or {}), **(params or {})}
        model = op.body_model() if op.writes else None
        if model is not None:
            from detente.operations.body import parse

            arguments["body"] = parse(model, body)
        try:
            bound = inspect.signature(op.handler).bind(self.service, **arguments)
        except TypeError as exc:
            from detente.errors import ValidationError

            raise ValidationError(f"{op.name}: {exc}") from None
        bound.apply_defaults()
        return self.invoke(op, *bound.args[1:], **bound.kwargs)

    def close_store(self) -> None:
        """Close the service's store (a local process's, at its end), first saving a
        snapshot when this process folded a long tail (the next process starts warm).
        Never raises: a process ending keeps its own error, if any."""
        from detente.service.checkpoints import SHORT_LIVED_TAIL

        with contextlib.suppress(Exception):
            self.service.save_snapshots(min_tail=SHORT_LIVED_TAIL)
            self.service.store.close()

    @contextlib.contextmanager
    def _acting(self, op: Operation[Any]) -> Iterator[None]:
        if self.principal is None or not op.writes:
            yield
            return
        with acting_as(self.principal()):
            yield
