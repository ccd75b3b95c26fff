"""``GET /v1/events/stream``: the live event stream as Server-Sent Events.

Each message has ``id:`` = the event's global sequence, ``event:`` = its type and
``data:`` = the JSON envelope. The stream starts after ``Last-Event-ID`` (a reconnecting
``EventSource`` sends it; sequences are global, so it may come from another server on
the same store), else after ``since``, else at the head. Every event arrives once and in
order.

Query filters (all optional, combined with AND): ``repo``; ``claim`` (the claim's own
stream and every event whose payload names it, e.g. its meetings); ``path`` (a path
prefix: events of claims whose scope has a pattern under it, or covering it); ``type``
(comma-separated names, ``claim.*`` for a family).

One fan-out per server (:class:`_Hub`) reads the log once per wake-up and hands each
batch of events, encoded once and with its filter keys computed once
(:class:`~detente.api.sse_filter.EventKeys`), to every subscriber: as one chunk written
straight to the connection when the subscriber's stream is idle and the connection takes
it without blocking (:class:`~detente.api.chunk_writer.ChunkWriter`; no task wakes for
such a delivery), else into the subscriber's bounded buffer, which the stream's task
drains in order.
Wake-ups come from this server's commits, from the store for other servers' commits
(PostgreSQL ``NOTIFY``, an etcd watch) and from a poll timer (other processes on one
SQLite file); they are hints: the hub always re-reads from its sequence, so nothing is
skipped or repeated.

``event: resync`` with ``{"position", "code", "reason"}`` says the stream cannot
continue seamlessly; the client refreshes the canonical records:

- ``position_unavailable``: the requested position is beyond the head (store reset,
  another cluster) or below the oldest retained event; the stream continues after
  ``position``;
- ``slow_consumer``: the client's buffer (:attr:`StreamSettings.buffer_events`) filled
  up; the stream ends after the hint, and reconnecting with ``Last-Event-ID: position``
  replays from the log. A slow client never slows the others and never grows memory
  beyond its buffer; one that stops reading altogether is disconnected once a send has
  blocked for :attr:`StreamSettings.send_timeout_seconds`.

``event: credentials_expired`` with ``{"position", "code": "credentials_expired",
"reason"}`` ends a stream whose bearer token has expired (by the server's clock): no event
is delivered on expired credentials; the client reconnects with a fresh token and
``Last-Event-ID: position`` and misses nothing.

Comment lines (``: ping``) every :attr:`StreamSettings.heartbeat_seconds` keep proxies
from closing idle streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from fastapi import Request

from detente.api.chunk_writer import ChunkWriter
from detente.api.sse_filter import (
    EventKeys,
    credentials_expired,
    parse_filter,
    resync,
)
from detente.api.sse_response import EventStreamResponse
from detente.api.sse_subscriber import Subscriber
from detente.api.supervision import supervisor_for
from detente.errors import DetenteError
from detente.eventlog.envelope import StoredEvent
from detente.service import Service
from detente.storage.base import NotifyingStore, RetainingStore

_log = logging.getLogger("detente.api")


@dataclass(frozen=True)
class StreamSettings:
    """Limits of the stream (per server; see :func:`configure`).

    Attributes:
        buffer_events: events buffered per client before it is cut off as slow.
        heartbeat_seconds: interval of ``: ping`` comment lines.
        poll_seconds: re-read interval when nothing woke the hub.
        send_timeout_seconds: a send blocked this long closes the connection.
        batch: events per log read.
    """

    buffer_events: int = 1024
    heartbeat_seconds: float = 15.0
    poll_seconds: float = 1.0
    send_timeout_seconds: float = 30.0
    batch: int = 500


_settings: weakref.WeakKeyDictionary[Service, StreamSettings] = weakref.WeakKeyDictionary()
_hubs: weakref.WeakKeyDictionary[Service, _Hub] = weakref.WeakKeyDictionary()


def configure(service: Service, settings: StreamSettings) -> None:
    """Use ``settings`` for streams of ``service`` opened from now on."""
    _settings[service] = settings


def stats(service: Service) -> dict[str, int]:
    """``{"subscribers", "position", "cutOff"}`` of the service's current fan-out."""
    hub = _hubs.get(service)
    if hub is None:
        return {"subscribers": 0, "position": 0, "cutOff": 0}
    return {"subscribers": len(hub.subs), "position": hub.position, "cutOff": hub.cut_off}


# ---------------------------------------------------------------------- fan-out


class _Hub:
    """One reader of the log per server and event loop, fanning out to subscribers."""

    def __init__(self, service: Service, settings: StreamSettings) -> None:
        self.service = service
        self.settings = settings
        self.loop = asyncio.get_running_loop()
        self.subs: set[Subscriber] = set()
        self.position = 0
        self.cut_off = 0
        self.scopes: dict[str, tuple[str, ...]] = {}
        self._scoped_repos: set[str] = set()
        self._path_filtered = 0  # subscribers with a path filter (they need the scopes)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._start = asyncio.Lock()
        self._unlisten: list[Callable[[], None]] = []

    def _poke(self, _seq: int) -> None:  # called from any thread
        with contextlib.suppress(RuntimeError):  # the loop closed
            self.loop.call_soon_threadsafe(self._wake.set)

    async def add(self, sub: Subscriber) -> None:
        async with self._start:
            if self._task is None:
                self.position = (await asyncio.to_thread(self.service.store.head))[0]
                self._unlisten = [self.service.broadcaster.listen(self._poke)]
                store = self.service.store
                if isinstance(store, NotifyingStore):
                    self._unlisten.append(store.listen(self._poke))
                # Supervised: a failure is logged and the fan-out restarts with backoff,
                # instead of leaving every subscriber with pings and no events.
                self._task = supervisor_for(self.service).start("sse-fanout", self._run)
            self.subs.add(sub)
            self._path_filtered += sub.filter.path is not None

    def remove(self, sub: Subscriber) -> None:
        if sub in self.subs:
            self.subs.discard(sub)
            self._path_filtered -= sub.filter.path is not None
        if not self.subs and self._task is not None:
            supervisor_for(self.service).rest("sse-fanout", self._task)
            self._task = None
            for unlisten in self._unlisten:
                unlisten()
            self._unlisten = []

    def _read(self, since: int, repo: str | None = None) -> list[StoredEvent]:
        """Read the log after ``since`` (worker thread), learning claim scopes on the way."""
        batch = self.service.store.read(since=since, limit=self.settings.batch, repo=repo)
        if self._path_filtered:
            for event in batch:
                paths = event.data.get("paths")
                if event.subject.startswith("claim/") and isinstance(paths, list):
                    self.scopes[event.subject] = tuple(str(p) for p in paths)
                elif event.repo not in self._scoped_repos and event.subject not in self.scopes:
                    self._scoped_repos.add(event.repo)
                    for row in self.service.store.records("claim", event.repo):
                        scope = tuple(str(p) for p in row.body.get("paths", ()))
                        self.scopes.setdefault(f"claim/{row.id}", scope)
        return batch

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                batch = await asyncio.to_thread(self._read, self.position)
            except DetenteError as exc:  # the store is failing over: try again shortly
                _log.warning(
                    "event stream: reading the log failed; retrying",
                    extra={"code": exc.code, "detail": exc.detail},
                )
                batch = []
            if batch:
                # One offer per subscriber for the whole batch: an idle subscriber gets
                # every event it wants in one write.
                keyed = [EventKeys(event, self.scopes) for event in batch]
                whole = (  # encoded once per batch for every unfiltered subscriber
                    keyed[0].message
                    if len(keyed) == 1
                    else b"".join(keys.message for keys in keyed)
                )
                self.position = batch[-1].seq
                for sub in list(self.subs):
                    if sub.live and not sub.offer(keyed, whole):
                        self.cut_off += 1
            if len(batch) == self.settings.batch:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.settings.poll_seconds)

    async def stream(
        self, sub: Subscriber, first: bytes | None = None, writer: ChunkWriter | None = None
    ) -> AsyncIterator[bytes]:
        """The messages of one subscriber: ``first`` (a resync hint) if any, the replay from
        the log, then live from the hub, which writes through ``writer`` itself while the
        stream waits with nothing queued."""
        if first is not None:
            yield first
        await self.add(sub)
        try:
            sub.delivered = sub.position
            # Nothing to replay (a stream from the head): live at once, without a log read.
            sub.live = sub.position >= self.position
            while not sub.live:
                target = self.position  # committed before the read below starts
                batch = await asyncio.to_thread(self._read, sub.position, sub.filter.repo)
                if sub.ended():
                    yield credentials_expired(sub.delivered)
                    return
                for event in batch:
                    sub.position = event.seq
                    keys = EventKeys(event, self.scopes)
                    if sub.filter.wants(keys):
                        sub.delivered = event.seq
                        yield keys.message
                if len(batch) < self.settings.batch:
                    sub.position = max(sub.position, target)
                sub.live = sub.position >= self.position  # no await in between
            while True:
                if sub.ended():
                    yield credentials_expired(sub.delivered)
                    return
                queue = sub.queue
                if len(queue) == 1:
                    sub.delivered, message = queue.popleft()
                    yield message
                    continue
                if queue:  # one send for everything waiting: fewer writes per client
                    waiting = list(queue)
                    queue.clear()
                    sub.delivered = waiting[-1][0]
                    yield b"".join(message for _, message in waiting)
                    continue
                if sub.overflowed:
                    yield resync(
                        sub.delivered,
                        "slow_consumer",
                        f"more than {sub.capacity} events waited for this client; "
                        f"reconnect with Last-Event-ID: {sub.delivered}",
                    )
                    return
                remaining = sub.remaining()
                if remaining is None:
                    await sub.wait(writer)
                else:  # wake at the credentials' end even when no event comes
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(sub.wait(writer), timeout=remaining)
        finally:
            self.remove(sub)


def _hub(service: Service) -> _Hub:
    hub = _hubs.get(service)
    if hub is None or hub.loop is not asyncio.get_running_loop() or hub.loop.is_closed():
        hub = _hubs[service] = _Hub(service, _settings.get(service, StreamSettings()))
    return hub


# ---------------------------------------------------------------------- the route


def _start_position(
    head: int, first: int, since: int | None, last_event_id: str | None
) -> tuple[int, str | None]:
    """Where to start, and why it had to move (None when the position is served)."""
    if last_event_id is not None and last_event_id.strip():
        try:
            position = int(last_event_id.strip())
        except ValueError:
            return head, f"Last-Event-ID {last_event_id!r} is not a sequence number"
        if position < 0:
            return head, f"Last-Event-ID {position} is negative"
    elif since is not None:
        position = since
    else:
        return head, None
    if position > head:
        return head, f"position {position} is beyond the log's head {head}"
    if position < first - 1:
        return first - 1, f"events before {first} are no longer retained"
    return position, None


async def event_stream(
    request: Request,
    service: Service,
    *,
    repo: str | None,
    since: int | None,
    last_event_id: str | None,
    expires_at: float | None = None,
) -> EventStreamResponse:
    """Build the SSE response (see the module docstring).

    Args:
        expires_at: when the caller's credentials end (POSIX seconds, compared with the
            service's clock); the stream then sends ``event: credentials_expired`` and
            ends. None: never.

    Raises:
        ValidationError: ``validation_error`` for an unknown repo or a malformed filter.
    """
    if repo is not None:  # validates the repo name (a store read: off the event loop)
        await asyncio.to_thread(service.events, since=0, limit=1, repo=repo)
    stream_filter = parse_filter(repo, request.query_params)
    store = service.store
    head = await asyncio.to_thread(service.head)
    first = await asyncio.to_thread(store.first_seq) if isinstance(store, RetainingStore) else 1
    position, resync_reason = _start_position(head, first, since, last_event_id)
    hub = _hub(service)
    sub = Subscriber(stream_filter, position, hub.settings.buffer_events)
    if expires_at is not None:
        sub.expires_at = expires_at
        sub.now = lambda: service.clock.now().timestamp()

    hint = None
    if resync_reason is not None:
        hint = resync(position, "position_unavailable", resync_reason)
    writer = ChunkWriter()
    return EventStreamResponse(
        hub.stream(sub, hint, writer),  # no generator in between: one hop less
        heartbeat=hub.settings.heartbeat_seconds,
        send_timeout=hub.settings.send_timeout_seconds,
        writer=writer,
    )
