"""The access log counts every body byte, those a stream sent past the middlewares too."""

from __future__ import annotations

import asyncio
from typing import Any

from detente.api.access_log import AccessLogMiddleware
from detente.api.server_send import STREAMED_BYTES

from support import log_records


def test_the_logged_size_adds_the_bytes_a_stream_sent_straight_to_the_server() -> None:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"hello", "more_body": True})
        scope[STREAMED_BYTES] = 100  # what the stream wrote past this middleware
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def send(message: dict[str, Any]) -> None:
        pass

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    scope = {"type": "http", "method": "GET", "path": "/v1/events/stream", "client": None}
    with log_records("detente.access") as seen:
        asyncio.run(AccessLogMiddleware(app)(scope, receive, send))  # type: ignore[arg-type]
    [line] = seen
    assert line.bytes == 105  # type: ignore[attr-defined]
    assert line.status == 200  # type: ignore[attr-defined]
