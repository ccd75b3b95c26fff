"""The event stream's ASGI response: chunks in order, pings when idle, a blocked send or a
disconnect ends it and closes the stream's generator (driven through its ASGI interface)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from detente.api.server_send import SERVER_SEND, STREAMED_BYTES
from detente.api.sse_response import PING, EventStreamResponse


def _scope() -> dict[str, Any]:
    """A fresh HTTP scope (the response writes into its scope)."""
    return {"type": "http", "method": "GET", "path": "/v1/events/stream"}


class _Body:
    """A stream of ``chunks`` that then waits forever; records that it was closed."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks
        self.closed = asyncio.Event()

    async def __call__(self) -> AsyncIterator[bytes]:
        try:
            for chunk in self.chunks:
                yield chunk
            await asyncio.Event().wait()  # no more events, ever
        finally:
            self.closed.set()


async def _never() -> dict[str, Any]:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


def test_chunks_are_sent_in_order_and_a_disconnect_ends_the_response() -> None:
    async def run() -> tuple[list[Any], bool]:
        body = _Body(b"id: 1\n\n", b"id: 2\n\n")
        sent: list[Any] = []
        gone = asyncio.Event()

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message.get("body") == b"id: 2\n\n":
                gone.set()

        async def receive() -> dict[str, Any]:
            await gone.wait()
            return {"type": "http.disconnect"}

        response = EventStreamResponse(body(), heartbeat=60, send_timeout=60)
        await asyncio.wait_for(response(_scope(), receive, send), timeout=10)
        return sent, body.closed.is_set()

    sent, closed = asyncio.run(run())
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    headers = dict(sent[0]["headers"])
    assert headers[b"content-type"].startswith(b"text/event-stream")
    assert [m["body"] for m in sent[1:]] == [b"id: 1\n\n", b"id: 2\n\n"]
    assert closed, "the stream's generator is closed (its subscriber leaves the fan-out)"


def test_an_idle_stream_sends_ping_comments() -> None:
    async def run() -> list[bytes]:
        body = _Body()
        pings: list[bytes] = []
        enough = asyncio.Event()

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                pings.append(message["body"])
                if len(pings) == 3:
                    enough.set()

        async def receive() -> dict[str, Any]:
            await enough.wait()
            return {"type": "http.disconnect"}

        response = EventStreamResponse(body(), heartbeat=0.01, send_timeout=60)
        await asyncio.wait_for(response(_scope(), receive, send), timeout=10)
        return pings

    assert asyncio.run(run()) == [PING, PING, PING]


def test_a_send_blocked_past_the_send_timeout_ends_the_response() -> None:
    async def run() -> bool:
        body = _Body(b"id: 1\n\n")

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                await asyncio.Event().wait()  # the client stopped reading: blocks forever

        response = EventStreamResponse(body(), heartbeat=60, send_timeout=0.05)
        await asyncio.wait_for(response(_scope(), _never, send), timeout=10)
        return body.closed.is_set()

    assert asyncio.run(run()), "the response ended and closed the stream"


def test_a_cancellation_from_the_server_is_not_swallowed() -> None:
    async def run() -> bool:
        body = _Body()
        started = asyncio.Event()

        async def send(message: dict[str, Any]) -> None:
            started.set()

        response = EventStreamResponse(body(), heartbeat=60, send_timeout=60)
        task = asyncio.ensure_future(response(_scope(), _never, send))
        await asyncio.wait_for(started.wait(), timeout=10)
        task.cancel()
        try:
            await asyncio.wait_for(task, timeout=10)
        except asyncio.CancelledError:
            return True
        return False

    assert asyncio.run(run()), "a shutdown's cancellation propagates"


def test_body_chunks_go_to_the_servers_own_send_and_the_start_and_end_through_the_middlewares() -> (
    None
):
    async def run() -> tuple[list[Any], list[Any], dict[str, Any]]:
        body = _Body(b"id: 1\n\n", b"id: 2\n\n")
        wrapped: list[Any] = []
        server: list[Any] = []

        async def middleware_send(message: dict[str, Any]) -> None:
            wrapped.append(message)

        async def server_send(message: dict[str, Any]) -> None:
            server.append(message)

        async def finite() -> AsyncIterator[bytes]:
            for chunk in body.chunks:
                yield chunk

        scope = {**_scope(), SERVER_SEND: server_send}
        response = EventStreamResponse(finite(), heartbeat=60, send_timeout=60)
        await asyncio.wait_for(response(scope, _never, middleware_send), timeout=10)
        return wrapped, server, scope

    wrapped, server, scope = asyncio.run(run())
    assert [m["type"] for m in wrapped] == ["http.response.start", "http.response.body"]
    assert wrapped[-1]["more_body"] is False, "the end passes the middlewares"
    assert [m["body"] for m in server] == [b"id: 1\n\n", b"id: 2\n\n"]
    assert scope[STREAMED_BYTES] == 14, "the access log learns the streamed size"
