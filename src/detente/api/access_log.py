"""One ``detente.access`` log line per HTTP request, with structured fields.

Fields: ``method``, ``path``, ``status``, ``duration_ms``, ``bytes`` (response body),
``client``; a stream (SSE) is logged when it ends. A request whose response never
started (the client went away) is logged with ``status=0``.
"""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from detente.api.server_send import STREAMED_BYTES

__all__ = ["AccessLogMiddleware"]

_log = logging.getLogger("detente.access")


class AccessLogMiddleware:
    """ASGI middleware writing the access log (INFO on ``detente.access``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _log.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()  # a duration, not a time of day
        status = 0
        size = 0

        async def measured(message: Message) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, measured)
        finally:
            client = scope.get("client")
            _log.info(
                "%s %s %s",
                scope["method"],
                scope["path"],
                status,
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                    "bytes": size + scope.get(STREAMED_BYTES, 0),
                    "client": f"{client[0]}:{client[1]}" if client else None,
                },
            )
