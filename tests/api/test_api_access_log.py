"""The access log counts every body byte, those a stream sent past the middlewares too."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from detente.api.access_log import AccessLogMiddleware
from detente.api.server_send import STREAMED_BYTES


class _Records(logging.Handler):
    """The records of one logger, whatever an earlier test configured (a server started
    in-process turns the ``detente`` loggers' propagation off, which hides them from
    ``caplog``)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


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
    logger = logging.getLogger("detente.access")
    handler, level = _Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        asyncio.run(AccessLogMiddleware(app)(scope, receive, send))  # type: ignore[arg-type]
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    [line] = handler.records
    assert line.bytes == 105  # type: ignore[attr-defined]
    assert line.status == 200  # type: ignore[attr-defined]
