"""Read a request's whole body in a middleware, then hand it on to the app unchanged.

The signature check (:mod:`detente.api.auth`) and the idempotency keys
(:mod:`detente.api.idempotency`) both need the body before the route runs; the route then
reads it again from :func:`replaying`.
"""

from __future__ import annotations

from starlette.types import Message, Receive

__all__ = ["read_body", "replaying"]


async def read_body(receive: Receive) -> bytes:
    """The whole request body: every ``http.request`` chunk until the last one (or until
    the client disconnects: what arrived by then). The body limit outside bounds it."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` as one ``http.request`` message, then defers to
    ``receive`` (a disconnect, for a streaming answer)."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
