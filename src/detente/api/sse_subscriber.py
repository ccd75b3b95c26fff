"""One client of the event stream's fan-out (:mod:`detente.api.sse`): its filter, its
position, its bounded buffer, the connection it may be written to directly, and when the
credentials it was opened with end."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from detente.api.chunk_writer import ChunkWriter
from detente.api.sse_filter import EventKeys, StreamFilter

__all__ = ["Subscriber"]


@dataclass(eq=False)
class Subscriber:
    filter: StreamFilter
    position: int  # every event <= position was delivered, queued or filtered out
    capacity: int
    queue: deque[tuple[int, bytes]] = field(default_factory=deque)
    live: bool = False
    overflowed: bool = False
    delivered: int = 0  # the last event handed to the connection (a resync's position)
    #: The future the subscriber's stream waits on (None while it is not waiting): a bare
    #: future, one allocation per wait, is the cheapest wake-up asyncio offers.
    waiter: asyncio.Future[None] | None = None
    #: The connection's writer while the stream waits with nothing queued: the fan-out
    #: then writes to the connection itself and the stream's task sleeps on.
    writer: ChunkWriter | None = None
    #: No filter at all: every event is wanted, and a batch's shared chunk fits as is.
    everything: bool = field(init=False, default=False)
    #: When the credentials the stream was opened with end (POSIX seconds by
    #: :attr:`now`, the server's clock); None: never.
    expires_at: float | None = None
    now: Callable[[], float] | None = None
    #: The credentials ended: nothing more is delivered; the stream says so and ends.
    expired: bool = False

    def ended(self) -> bool:
        """Whether the stream's credentials have ended (remembered once seen)."""
        if not self.expired and self.expires_at is not None and self.now is not None:
            self.expired = self.now() >= self.expires_at
        return self.expired

    def remaining(self) -> float | None:
        """Seconds until the credentials end (None: they never do)."""
        if self.expires_at is None or self.now is None:
            return None
        return max(0.0, self.expires_at - self.now())

    def wake(self) -> None:
        """Wake the stream if it waits (from the event loop's thread)."""
        waiter = self.waiter
        if waiter is not None:
            self.waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self, writer: ChunkWriter | None) -> None:
        """Wait until :meth:`wake` (returns at once when something is queued already),
        letting the fan-out write through ``writer`` meanwhile."""
        if self.queue or self.overflowed or self.expired:
            return
        waiter = self.waiter = asyncio.get_running_loop().create_future()
        self.writer = writer
        try:
            await waiter
        finally:
            self.waiter = self.writer = None

    def __post_init__(self) -> None:
        f = self.filter
        self.everything = f.repo is None and f.claim is None and f.path is None and not f.types

    def offer(self, batch: list[EventKeys], whole: bytes) -> bool:
        """Deliver the wanted events of ``batch`` (in order; ``whole`` is all their messages
        in one chunk): written at once as one chunk when the stream is idle and its
        connection takes it, else queued; False when the buffer just overflowed."""
        if self.overflowed or self.expired:
            return True
        if self.ended():  # never a byte more on expired credentials
            self.wake()
            return True
        wanted: list[EventKeys]
        if self.everything and batch[0].event.seq > self.position:
            wanted, chunk = batch, whole
            self.position = batch[-1].event.seq
        else:
            wants = self.filter.wants
            wanted = []
            for keys in batch:
                seq = keys.event.seq
                if seq > self.position:
                    self.position = seq
                    if wants(keys):
                        wanted.append(keys)
            if not wanted:
                return True
            chunk = b""
        writer = self.writer
        if writer is not None and not self.queue:
            if not chunk:
                chunk = b"".join(keys.message for keys in wanted)
            if writer.write_now(chunk):
                self.delivered = wanted[-1].event.seq
                return True
        queue = self.queue
        for keys in wanted:
            if len(queue) >= self.capacity:
                self.overflowed = True
                self.wake()
                return False
            queue.append((keys.event.seq, keys.message))
        self.wake()
        return True
