"""Warming the HTTP app before its first request (the service's half is
:mod:`detente.service.warmup`).

FastAPI builds a route's request validation (pydantic schemas of its body and
parameters) when a request first walks the router: measured on a 2-core machine, about
100-150 ms of the first ``POST /v1/claims`` after a start. :func:`warm_routes` walks the
whole router once from the app's lifespan with a request for a path no route has, so every
route is prepared and the walk answers a 404 that nobody receives (it runs under the
middlewares: no access-log line, no idempotency record).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from fastapi import FastAPI

__all__ = ["WARM_PATH", "warm_routes"]

#: The path of the walk (no route has it).
WARM_PATH = "/.well-known/detente-warm-up"


async def warm_routes(app: FastAPI) -> int:
    """Send ``GET`` :data:`WARM_PATH` through ``app``'s router (not its middlewares).

    Returns:
        The status the router answered (404 unless a route claims the path).
    """
    answered: list[int] = []
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": WARM_PATH,
        "raw_path": WARM_PATH.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"localhost")],
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0),
        "state": {},  # no "app": Starlette then answers the 404 itself instead of raising
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answered.append(int(message["status"]))

    await app.router(scope, receive, send)
    return answered[0] if answered else 0
