"""The server's own endpoints and its event log: health, the repositories served, pages
of events, the audit, and :meth:`~ServerEndpoints.watch` to follow the log live.

``watch`` streams ``GET /v1/events/stream`` from a server, resuming with
``Last-Event-ID`` after a dropped connection, and polls ``GET /v1/events`` in local mode.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from detente.cli.client.transport import REQUEST_TIMEOUT, Transport
from detente.cli.problems import ServerUnavailable, error_from_response
from detente.cli.sse import SseMessage, iter_sse

__all__ = ["ServerEndpoints"]


class ServerEndpoints(Transport):
    """``/healthz``, ``/v1/repos``, ``/v1/events...`` and ``/v1/audit/verify``."""

    def health(self) -> dict[str, Any]:
        """``GET /healthz``: ``{ok, version, head}``."""
        return self._request("GET", "/healthz")

    def repos(self) -> dict[str, Any]:
        """``GET /v1/repos``: ``{repos[{name, path, defaultBranch, caseInsensitive, headOid}]}``."""
        return self._request("GET", "/v1/repos")

    def events(
        self, *, since: int = 0, limit: int = 100, repo: str | None = None
    ) -> dict[str, Any]:
        """``GET /v1/events``: ``{events[], nextSince}``."""
        params = {"since": since, "limit": limit, "repo": repo}
        return self._request("GET", "/v1/events", params=params)

    def audit_verify(self) -> dict[str, Any]:
        """``GET /v1/audit/verify``: ``{ok, events, headHash}`` or the first broken link."""
        return self._request("GET", "/v1/audit/verify")

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
        """Follow the event log from ``since`` (default: the current head) forever.

        With a server this reads ``GET /v1/events/stream`` and, when the connection
        drops, reconnects with ``Last-Event-ID`` so nothing is lost or repeated. In
        local mode there is no long-lived server to stream from, so it polls
        ``GET /v1/events`` every ``poll_interval`` seconds (other processes write to the
        same store).

        Args:
            since: sequence to start after; None means the head at call time.
            repo: only this repository's events.
            poll_interval: seconds between polls in local mode.
            give_up_after: seconds of failed reconnection before giving up.
            read_timeout: seconds of silence after which the connection counts as dropped
                (the server pings every 15 s); the stream then resumes transparently.
            on_reconnect: called as ``(position, reason)`` before each reconnection.

        Yields:
            One :class:`SseMessage` per event (``data`` is the event's JSON envelope), or
            an ``event == "resync"`` message when the server cannot serve the position.

        Raises:
            ServerUnavailable: the server stayed unreachable for ``give_up_after`` seconds.
            DetenteError: the server refused the stream (e.g. unknown repo).
        """
        position = since if since is not None else int(self.health()["head"])
        if self.mode == "local":
            yield from self._poll(position, repo, poll_interval)
        else:
            yield from self._stream(position, repo, give_up_after, read_timeout, on_reconnect)

    def _poll(self, position: int, repo: str | None, interval: float) -> Iterator[SseMessage]:
        import json

        while True:
            page = self.events(since=position, limit=500, repo=repo)
            for event in page["events"]:
                position = int(event["seq"])
                yield SseMessage(str(position), str(event["type"]), json.dumps(event))
            if not page["events"]:
                time.sleep(interval)

    def _stream(
        self,
        position: int,
        repo: str | None,
        give_up_after: float,
        read_timeout: float,
        on_reconnect: Callable[[int, str], None] | None,
    ) -> Iterator[SseMessage]:
        import httpx

        params: dict[str, str | int] = {"since": position}
        if repo:
            params["repo"] = repo
        timeout = httpx.Timeout(REQUEST_TIMEOUT, read=read_timeout)
        failing_since: float | None = None
        backoff = 0.1
        while True:
            headers = {"Accept": "text/event-stream", "Last-Event-ID": str(position)}
            try:
                with self.http.stream(
                    "GET", "/v1/events/stream", params=params, headers=headers, timeout=timeout
                ) as response:
                    if response.status_code >= 300:
                        response.read()
                        raise error_from_response(response)
                    failing_since, backoff = None, 0.1
                    for message in iter_sse(response.iter_lines()):
                        if message.id is not None and message.id.isdigit():
                            position = int(message.id)
                        yield message
                reason = "the server closed the stream"
            except httpx.TransportError as exc:
                reason = f"{type(exc).__name__}: {exc}"
            now = time.monotonic()
            failing_since = failing_since if failing_since is not None else now
            if now - failing_since > give_up_after:
                raise ServerUnavailable(
                    f"lost the event stream of {self.url} and could not reconnect for "
                    f"{give_up_after:.0f} s ({reason})",
                    url=self.url,
                    lastEventId=position,
                )
            if on_reconnect is not None:
                on_reconnect(position, reason)
            time.sleep(backoff)
            backoff = min(backoff * 2, 2.0)
