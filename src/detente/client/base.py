"""What every client is: a connection to one detente (a server, or a service in this
process) that carries operations (:mod:`detente.operations`) and follows the event log.

The operation methods (:mod:`.claims`, :mod:`.meetings`, :mod:`.agents`, :mod:`.memory`,
:mod:`.gates`, :mod:`.system`) build each operation's camelCase body once, here on the
client side, and hand it to :meth:`ClientBase._call`; an implementation decides how it
travels (:mod:`.http`: an HTTP request; :mod:`.inprocess`: a direct service call).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Self, TypeVar, cast

from detente.errors import StoreError
from detente.operations import system as routes
from detente.operations.declaration import Operation

if TYPE_CHECKING:
    from detente.client.sse import SseMessage

__all__ = ["Call", "ClientBase", "Follow", "Wire"]

#: A decoded JSON object in the API's camelCase wire shape (API.md); each operation's
#: is typed by its record (:mod:`detente.operations.wire`).
Wire = dict[str, Any]

_R = TypeVar("_R")


class ClientBase(ABC):
    """The connection state and the two things an implementation provides.

    Args:
        mode: ``"server"`` (HTTP) or ``"local"`` (in-process); reported in ``--json``.
        repo_name: the name the detente knows the current repository by, if any.
        repo_path: top level of the current repository's working tree, if any.
        on_close: called once by :meth:`close` (e.g. to close a local store).
    """

    def __init__(
        self,
        *,
        mode: str,
        repo_name: str | None = None,
        repo_path: Path | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.mode = mode
        self.repo_name = repo_name
        self.repo_path = repo_path
        self._on_close = on_close

    @property
    @abstractmethod
    def url(self) -> str:
        """Where the client talks to: the server's base URL, or a placeholder in-process."""

    def close(self) -> None:
        """Release the connection (and whatever ``on_close`` owns). Idempotent."""
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(
        self,
        route: Operation[_R],
        *,
        path: Mapping[str, str] | None = None,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> _R:
        """Carry one operation.

        Args:
            route: the operation.
            path: values of the route's path template parameters.
            body: the camelCase request body (operations that take one).
            params: query parameters; None values mean "not given" and are left out.

        Returns:
            The response's JSON object: the operation's record (``route``'s type).

        Raises:
            DetenteError: the :mod:`detente.errors` exception of the refusal's ``code``;
                ``server_unavailable`` when a server cannot be reached.
        """
        given = {k: v for k, v in (params or {}).items() if v is not None}
        return cast(_R, self._send(Call(route, dict(path or {}), body, given)))

    @abstractmethod
    def _send(self, call: Call) -> Wire:
        """Carry ``call`` (see :meth:`_call`) the way this implementation does."""

    def watch(
        self,
        *,
        since: int | None = None,
        repo: str | None = None,
        poll_interval: float = 0.5,
        give_up_after: float = 30.0,
        read_timeout: float = 60.0,
        on_reconnect: Callable[[int, str], None] | None = None,
    ) -> Iterator[SseMessage]:
        """Follow the event log from ``since`` (default: the head at call time) forever.

        Args:
            since: sequence to start after; None means the head at call time.
            repo: only this repository's events.
            poll_interval: seconds between polls where the log is polled (in-process).
            give_up_after: seconds of failed reconnection before giving up (HTTP).
            read_timeout: seconds of silence after which an HTTP stream counts as dropped
                (the server pings every 15 s); the stream then resumes transparently.
            on_reconnect: called as ``(position, reason)`` before each reconnection.

        Yields:
            One :class:`SseMessage` per event (``data`` is the event's JSON envelope), or
            an ``event == "resync"`` message when the server cannot serve the position.

        Raises:
            ServerUnavailable: the server stayed unreachable for ``give_up_after`` seconds.
            DetenteError: the stream was refused (e.g. unknown repo).
        """
        position = since if since is not None else self._head()
        options = Follow(poll_interval, give_up_after, read_timeout, on_reconnect)
        return self._follow(position, repo, options)

    def _head(self) -> int:
        head = self._call(routes.HEALTH)["head"]
        if head is None:  # the server's store did not answer its health check in time
            raise StoreError("the server's store did not answer: no head to follow from")
        return head

    @abstractmethod
    def _follow(self, position: int, repo: str | None, options: Follow) -> Iterator[SseMessage]:
        """The events after ``position`` (see :meth:`watch`), as this transport delivers them."""


class Call(NamedTuple):
    """One operation to carry.

    Attributes:
        route: the operation.
        path: values of the route's path template parameters.
        body: the camelCase request body, or None.
        params: the query parameters that were given (no None values).
    """

    route: Operation[Any]
    path: dict[str, str]
    body: Mapping[str, Any] | None
    params: dict[str, Any]


class Follow(NamedTuple):
    """How :meth:`ClientBase.watch` follows the log (its arguments, see there)."""

    poll_interval: float
    give_up_after: float
    read_timeout: float
    on_reconnect: Callable[[int, str], None] | None
