"""The ASGI response of the event stream: each chunk straight to ``send``, nothing per chunk.

A general SSE response (``sse-starlette``) pays, for every chunk, a cancel scope with a
timer (its per-send timeout), a lock and an encoding check; with 1,000 subscribers that is
1,000 timers armed and cancelled per event. The hub (:mod:`detente.api.sse`) already hands
every subscriber finished bytes, so this response only writes them, from a task of its own
(a wake-up resumes that task's two coroutines rather than the request's chain through
every middleware) and straight to the server's ``send`` (past the middlewares' wrappers,
see :mod:`detente.api.server_send`). Those writes go through the response's
:class:`~detente.api.chunk_writer.ChunkWriter`, which the body's producer may also use to
write a chunk itself while the stream's task is idle (the fan-out does: no task wakes at
all for such a delivery). What a stream needs besides is per connection, on one timer,
never per chunk:

- **heartbeat**: ``: ping`` comment lines when nothing was written for
  ``heartbeat`` seconds (proxies close idle connections);
- **send timeout**: a send still blocked after ``send_timeout`` seconds (a client that
  stopped reading, so the socket buffer is full) ends the response and its connection;
- **disconnect**: ``http.disconnect`` from the server ends the response at once, even
  while the stream waits for events.

Args:
    body: the stream's messages, already encoded (each a whole number of SSE messages).
    heartbeat: seconds of silence before a ``: ping`` line.
    send_timeout: seconds one send may block before the connection is dropped.
    writer: the chunk writer ``body``'s producer writes through (a new one if None).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from detente.api.chunk_writer import ChunkWriter
from detente.api.server_send import SERVER_SEND, STREAMED_BYTES

__all__ = ["PING", "EventStreamResponse"]

_log = logging.getLogger("detente.api")

#: The heartbeat comment (ignored by every SSE parser).
PING = b": ping\r\n\r\n"

_HEADERS = {"Cache-Control": "no-store", "Connection": "keep-alive", "X-Accel-Buffering": "no"}


class EventStreamResponse(StreamingResponse):
    """A ``text/event-stream`` response writing ``body``'s chunks as they come."""

    def __init__(
        self,
        body: AsyncIterator[bytes],
        *,
        heartbeat: float,
        send_timeout: float,
        writer: ChunkWriter | None = None,
    ) -> None:
        super().__init__(body, media_type="text/event-stream", headers=_HEADERS)
        self._events = body
        self.heartbeat = heartbeat
        self.send_timeout = send_timeout
        #: Writes the body chunks; ``body``'s producer may write through it directly.
        self.writer = writer if writer is not None else ChunkWriter()
        self._closed = False
        self._ended: str | None = None  # why this response cancelled its own task

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        self.writer.bind(scope.get(SERVER_SEND, send), loop)
        # The chunks are written by a task of their own: waking it for a delivery resumes
        # two coroutines, where the request's task would resume the whole middleware
        # stack's chain of awaits (a dozen frames) for every message.
        pump = loop.create_task(self._pump(send))
        helpers = [
            loop.create_task(self._watch_disconnect(receive, pump)),
            loop.create_task(self._tend(send, pump)),
        ]
        try:
            await asyncio.wait((pump,))
            failure = None if pump.cancelled() else pump.exception()
            if failure is not None:
                raise failure
            if self._ended == "send_timeout":
                _log.warning(
                    "event stream: a send blocked for %g s; closing the connection",
                    self.send_timeout,
                )
        finally:
            self._closed = True
            self.writer.close()
            scope[STREAMED_BYTES] = scope.get(STREAMED_BYTES, 0) + self.writer.streamed
            for helper in helpers:
                helper.cancel()
            if not pump.done():  # the server is cancelling the request
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait((pump,))
            with contextlib.suppress(Exception):
                await self._events.aclose()  # type: ignore[attr-defined]
            await self.writer.wait_closed()
        if self.background is not None:
            await self.background()

    async def _pump(self, send: Send) -> None:
        """Write every chunk the stream yields, then end the response."""
        writer = self.writer
        async for chunk in self._events:
            await writer.send(chunk)
        self._closed = True
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _end(self, task: asyncio.Task[object], why: str) -> None:
        if self._ended is None and not self._closed:
            self._ended = why
            task.cancel()

    async def _watch_disconnect(self, receive: Receive, task: asyncio.Task[object]) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self._end(task, "disconnect")
                return

    async def _tend(self, send: Send, task: asyncio.Task[object]) -> None:
        """Pings after silence; drops the connection when a send blocks too long."""
        loop = asyncio.get_running_loop()
        tick = max(0.01, min(self.heartbeat, self.send_timeout) / 2)
        pinging: asyncio.Task[None] | None = None
        while not self._closed:
            await asyncio.sleep(tick)
            now = loop.time()
            since = self.writer.sending_since
            if since is not None and now - since >= self.send_timeout:
                self._end(task, "send_timeout")
                return
            idle = since is None and now - self.writer.last_write >= self.heartbeat
            if idle and (pinging is None or pinging.done()) and not self._closed:
                self.writer.last_write = now
                pinging = loop.create_task(self._ping(send))

    async def _ping(self, send: Send) -> None:
        with contextlib.suppress(Exception):  # the connection closed meanwhile
            if not self._closed:
                await send({"type": "http.response.body", "body": PING, "more_body": True})
