"""Writing a stream's chunks from whichever code has them, without a task switch when possible.

An event stream's chunk used to travel: the fan-out queues it, wakes the stream's task, the
task resumes its coroutines and awaits the server's ``send``, which writes to the socket
without ever suspending (unless the socket's buffer is full). With 1,000 subscribers the
wake-ups and task switches cost as much as the writes. A :class:`ChunkWriter` lets the
fan-out write a chunk itself when the stream is idle (:meth:`ChunkWriter.write_now`): it
runs the server's ``send`` coroutine eagerly, in the caller, up to its first suspension.
A send that completes without suspending (the usual case) is done, with no task involved;
one that suspends (the socket's buffer is full, the server waits for it to drain) is
finished by a task of its own, and the writer takes no further eager chunk until it is
(the stream's task writes them in order with :meth:`ChunkWriter.send`, which waits for it
first). This is what Python 3.12's eager tasks (``asyncio.eager_task_factory``) do for a
whole task, done here by hand for one call so that it works on 3.11.

The writer also keeps what the response's timer needs: when a send started blocking
(:attr:`ChunkWriter.sending_since`, for the send timeout), when the last chunk was
written (:attr:`ChunkWriter.last_write`, for heartbeats) and the bytes written (for the
access log).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Generator
from typing import Any

from starlette.types import Message, Send

__all__ = ["ChunkWriter", "run_eagerly"]

_log = logging.getLogger("detente.api")


class _Rest:
    """The remainder of a coroutine that already ran up to a suspension on ``pending``.

    Awaiting it continues the coroutine exactly as ``await`` would have (what ``yield
    from`` does, except that the first value was already yielded): what the coroutine
    waits on goes up to the task, what the task sends or throws goes down to the coroutine.
    """

    __slots__ = ("_coro", "_pending")

    def __init__(self, coro: Generator[Any, Any, None], pending: object) -> None:
        self._coro = coro
        self._pending = pending

    def __await__(self) -> Generator[Any, Any, None]:
        coro, value = self._coro, self._pending
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:
                try:
                    value = coro.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    value = coro.send(sent)
                except StopIteration:
                    return


def run_eagerly(awaitable: Awaitable[None]) -> _Rest | None:
    """Run ``awaitable`` (a coroutine, say) in the caller up to its first suspension.

    Returns:
        None when it completed; otherwise an awaitable that finishes it (await it, or
        wrap it in a task, exactly once; dropping it closes the coroutine).

    Raises:
        Exception: whatever ``awaitable`` raised before suspending.
    """
    coro = awaitable.__await__()
    try:
        pending = coro.send(None)
    except StopIteration:
        return None
    return _Rest(coro, pending)


async def _finish(rest: _Rest) -> None:
    await rest


class ChunkWriter:
    """The body writer of one streaming response (see the module docstring).

    Unbound (nothing can be written) until the response calls :meth:`bind`; closed by
    the response when it ends.
    """

    __slots__ = (
        "_inflight",
        "_loop",
        "_send",
        "closed",
        "last_write",
        "sending_since",
        "streamed",
    )

    def __init__(self) -> None:
        self._send: Send | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inflight: asyncio.Task[None] | None = None
        self.closed = False
        #: Loop time of the last chunk handed to the server.
        self.last_write = 0.0
        #: Loop time since which a send has been blocked (None when none is).
        self.sending_since: float | None = None
        #: Body bytes handed to the server.
        self.streamed = 0

    def bind(self, send: Send, loop: asyncio.AbstractEventLoop) -> None:
        """Write through ``send`` (the server's) on ``loop`` from now on."""
        self._send, self._loop = send, loop
        self.last_write = loop.time()

    @staticmethod
    def _message(chunk: bytes) -> Message:
        return {"type": "http.response.body", "body": chunk, "more_body": True}

    def write_now(self, chunk: bytes) -> bool:
        """Hand ``chunk`` to the server now, from the caller (on the event loop's thread).

        Returns:
            True when the chunk was handed over (written, or waiting for the socket to
            drain in a task of its own); False when the writer cannot take it now (not
            bound, closed, an earlier send still blocked, or the send failed): the caller
            keeps it for the stream's task, which writes it with :meth:`send`.
        """
        send, loop = self._send, self._loop
        if send is None or loop is None or self.closed or self._inflight is not None:
            return False
        now = loop.time()
        try:
            rest = run_eagerly(send(self._message(chunk)))
        except Exception:  # the stream's task meets the failure again on its own send
            _log.debug("event stream: an eager send failed", exc_info=True)
            return False
        self.last_write = now
        self.streamed += len(chunk)
        if rest is not None:
            self.sending_since = now
            self._inflight = loop.create_task(_finish(rest))
            self._inflight.add_done_callback(self._finished)
        return True

    def _finished(self, task: asyncio.Task[None]) -> None:
        if task is self._inflight:
            self._inflight = None
            self.sending_since = None
        if not task.cancelled() and task.exception() is not None:
            self.closed = True
            _log.debug("event stream: a send failed", exc_info=task.exception())

    async def send(self, chunk: bytes) -> None:
        """Write ``chunk`` after any blocked eager send (the stream's own task)."""
        if self._inflight is not None:
            await asyncio.wait((self._inflight,))
        send, loop = self._send, self._loop
        assert send is not None and loop is not None, "bind() first"
        self.sending_since = self.last_write = loop.time()
        await send(self._message(chunk))
        self.sending_since = None
        self.streamed += len(chunk)

    def close(self) -> None:
        """Take no more chunks; cancel a send still blocked."""
        self.closed = True
        inflight = self._inflight
        if inflight is not None and not inflight.done():
            inflight.cancel()

    async def wait_closed(self) -> None:
        """Wait until a send cancelled by :meth:`close` has ended."""
        inflight = self._inflight
        if inflight is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait((inflight,))
