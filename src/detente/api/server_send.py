"""The server's own ``send``, for a streaming response's body past the middleware stack.

Every ASGI middleware that watches a response wraps ``send`` in a coroutine of its own
(the error middleware, the exception handlers, the body limit, the access log): four or
five calls for each message, harmless once per request and the largest Python cost of an
event stream, which sends one message per event to every subscriber. The middlewares
here look only at ``http.response.start`` (status, headers, "has the response started"),
except the access log, which counts body bytes.

So :class:`App` puts the server's ``send`` into the scope under :data:`SERVER_SEND`; the
event stream's response (:mod:`detente.api.sse_response`) sends its start and its end
through the wrapped ``send`` and its body chunks straight to the server's, adding their
sizes to ``scope[STREAMED_BYTES]`` for the access log. A middleware that rewrites
response bodies would not see a stream's: none does, and none may wrap the stream.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

__all__ = ["SERVER_SEND", "STREAMED_BYTES", "App"]

#: Scope key: the ``send`` the ASGI server gave the application.
SERVER_SEND = "detente.server_send"
#: Scope key: body bytes a stream sent past the middlewares (counted by the access log).
STREAMED_BYTES = "detente.streamed_bytes"


class App(FastAPI):
    """A FastAPI application that records the server's ``send`` in each HTTP scope."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[SERVER_SEND] = send
        await super().__call__(scope, receive, send)
