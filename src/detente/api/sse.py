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
event, encoded once, to every subscriber's bounded buffer. Wake-ups come from this
server's commits, from the store for other servers' commits (PostgreSQL ``NOTIFY``, an
etcd watch) and from a poll timer (other processes on one SQLite file); they are hints:
the hub always re-reads from its sequence, so nothing is skipped or repeated.

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

Comment lines (``: ping``) every :attr:`StreamSettings.heartbeat_seconds` keep proxies
from closing idle streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from sse_starlette.sse import EventSourceResponse

from detente.api.supervision import supervisor_for
from detente.errors import DetenteError, ValidationError
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


# ---------------------------------------------------------------------- filters

_PATH_KEYS = {"paths", "addPaths", "removePaths", "pendingPaths", "target", "targets"}
_GLOB = "*?["


def _strings(value: Any, depth: int = 0) -> Iterable[str]:
    """Every string in a JSON value, at most 8 levels deep."""
    if depth > 8:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | dict):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _strings(item, depth + 1)


def _path_patterns(value: Any, depth: int = 0) -> Iterable[str]:
    """Strings under path-like keys (``paths``, ``target``, ...) of a JSON value."""
    if depth > 8:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _PATH_KEYS:
                yield from _strings(item, depth + 1)
            else:
                yield from _path_patterns(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _path_patterns(item, depth + 1)


def _pattern_touches(pattern: str, prefix: str) -> bool:
    """Whether a path pattern may name something under ``prefix`` (over-inclusive)."""
    literal = pattern
    for i, ch in enumerate(pattern):
        if ch in _GLOB:
            literal = pattern[:i]
            break
    return pattern.startswith(prefix) or prefix.startswith(literal)


@dataclass(frozen=True)
class StreamFilter:
    """Which events a subscriber wants (see the module docstring)."""

    repo: str | None = None
    claim: str | None = None
    path: str | None = None
    types: tuple[str, ...] = ()

    def matches(self, event: StoredEvent, scopes: Mapping[str, tuple[str, ...]]) -> bool:
        if self.repo is not None and event.repo != self.repo:
            return False
        if self.types and not any(
            event.type == t or (t.endswith("*") and event.type.startswith(t[:-1]))
            for t in self.types
        ):
            return False
        if (
            self.claim is not None
            and event.subject != f"claim/{self.claim}"
            and self.claim not in set(_strings(event.data))
        ):
            return False
        if self.path is not None:
            patterns = set(_path_patterns(event.data)) | set(scopes.get(event.subject, ()))
            if not any(_pattern_touches(p, self.path) for p in patterns):
                return False
        return True


def _encode(event: StoredEvent) -> bytes:
    data = json.dumps(event.to_wire(), separators=(",", ":"), ensure_ascii=False)
    return f"id: {event.seq}\nevent: {event.type}\ndata: {data}\n\n".encode()


def _resync(position: int, code: str, reason: str) -> bytes:
    data = json.dumps({"position": position, "code": code, "reason": reason})
    return f"id: {position}\nevent: resync\ndata: {data}\n\n".encode()


# ---------------------------------------------------------------------- fan-out


@dataclass(eq=False)
class _Subscriber:
    filter: StreamFilter
    position: int  # every event <= position was delivered, queued or filtered out
    capacity: int
    queue: deque[tuple[int, bytes]] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    live: bool = False
    overflowed: bool = False

    def offer(self, event: StoredEvent, message: bytes, scopes: Mapping[str, Any]) -> bool:
        """Queue ``event`` if wanted; False when the buffer just overflowed."""
        if event.seq <= self.position or self.overflowed:
            return True
        self.position = event.seq
        if not self.filter.matches(event, scopes):
            return True
        if len(self.queue) >= self.capacity:
            self.overflowed = True
            self.wake.set()
            return False
        self.queue.append((event.seq, message))
        self.wake.set()
        return True


class _Hub:
    """One reader of the log per server and event loop, fanning out to subscribers."""

    def __init__(self, service: Service, settings: StreamSettings) -> None:
        self.service = service
        self.settings = settings
        self.loop = asyncio.get_running_loop()
        self.subs: set[_Subscriber] = set()
        self.position = 0
        self.cut_off = 0
        self.scopes: dict[str, tuple[str, ...]] = {}
        self._scoped_repos: set[str] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._start = asyncio.Lock()
        self._unlisten: list[Callable[[], None]] = []

    def _poke(self, _seq: int) -> None:  # called from any thread
        with contextlib.suppress(RuntimeError):  # the loop closed
            self.loop.call_soon_threadsafe(self._wake.set)

    async def add(self, sub: _Subscriber) -> None:
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

    def remove(self, sub: _Subscriber) -> None:
        self.subs.discard(sub)
        if not self.subs and self._task is not None:
            self._task.cancel()
            self._task = None
            for unlisten in self._unlisten:
                unlisten()
            self._unlisten = []

    def _read(self, since: int, repo: str | None = None) -> list[StoredEvent]:
        """Read the log after ``since`` (worker thread), learning claim scopes on the way."""
        batch = self.service.store.read(since=since, limit=self.settings.batch, repo=repo)
        if any(s.filter.path is not None for s in list(self.subs)):
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
            for event in batch:
                self.position = event.seq
                message = _encode(event)
                for sub in list(self.subs):
                    if sub.live and not sub.offer(event, message, self.scopes):
                        self.cut_off += 1
            if len(batch) == self.settings.batch:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.settings.poll_seconds)

    async def stream(self, sub: _Subscriber) -> AsyncIterator[bytes]:
        """The messages of one subscriber: replay from the log, then live from the hub."""
        await self.add(sub)
        try:
            delivered = sub.position
            while not sub.live:
                target = self.position  # committed before the read below starts
                batch = await asyncio.to_thread(self._read, sub.position, sub.filter.repo)
                for event in batch:
                    sub.position = event.seq
                    if sub.filter.matches(event, self.scopes):
                        delivered = event.seq
                        yield _encode(event)
                if len(batch) < self.settings.batch:
                    sub.position = max(sub.position, target)
                sub.live = sub.position >= self.position  # no await in between
            while True:
                if sub.queue:  # one send for everything waiting: fewer writes per client
                    waiting = list(sub.queue)
                    sub.queue.clear()
                    delivered = waiting[-1][0]
                    yield b"".join(message for _, message in waiting)
                    continue
                if sub.overflowed:
                    yield _resync(
                        delivered,
                        "slow_consumer",
                        f"more than {sub.capacity} events waited for this client; "
                        f"reconnect with Last-Event-ID: {delivered}",
                    )
                    return
                sub.wake.clear()
                await sub.wake.wait()
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


def parse_filter(repo: str | None, query: Mapping[str, str]) -> StreamFilter:
    """The subscriber's filter from the query string.

    Raises:
        ValidationError: ``validation_error`` for an empty ``type`` entry or ``path``.
    """
    types = tuple(t.strip() for t in query.get("type", "").split(",") if t.strip())
    if "type" in query and not types:
        raise ValidationError("type must name at least one event type", field="type")
    path = query.get("path")
    if path is not None:
        path = path.strip().removeprefix("./")
        if not path or path.startswith("/") or ".." in path.split("/"):
            raise ValidationError("path must be a relative path prefix", field="path")
    return StreamFilter(repo=repo, claim=query.get("claim") or None, path=path, types=types)


async def event_stream(
    request: Request,
    service: Service,
    *,
    repo: str | None,
    since: int | None,
    last_event_id: str | None,
) -> EventSourceResponse:
    """Build the SSE response (see the module docstring).

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
    sub = _Subscriber(stream_filter, position, hub.settings.buffer_events)

    async def messages() -> AsyncIterator[bytes]:
        if resync_reason is not None:
            yield _resync(position, "position_unavailable", resync_reason)
        async for message in hub.stream(sub):
            yield message

    return EventSourceResponse(
        messages(),
        ping=hub.settings.heartbeat_seconds,
        send_timeout=hub.settings.send_timeout_seconds,
    )
