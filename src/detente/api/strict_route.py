"""Routes whose JSON bodies are read by the one strict reading.

FastAPI reads a JSON body with Python's :func:`json.loads`, which takes ``NaN``, a
duplicate key (last wins) and, through Starlette, a byte order mark: a body other parsers
read differently. :class:`StrictJsonRoute` reads it first with
:func:`~detente.operations.strict_json.read_json` (the reading MCP's stdio lines get too)
and hands FastAPI that value: a body it refuses is ``422 validation_error`` naming why,
and no handler runs, so nothing changes.
"""

from __future__ import annotations

import email.message
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute

from detente.operations.strict_json import read_json

__all__ = ["StrictJsonRoute"]


class StrictJsonRoute(APIRoute):
    """An :class:`~fastapi.routing.APIRoute` reading JSON bodies strictly."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            if _json_body(request):
                try:
                    raw = await request.body()
                except Exception as exc:  # a body over the limit: FastAPI's own wrapping,
                    # which :func:`~detente.api.edges.http_error_handler` reads (413)
                    raise HTTPException(400, "There was an error parsing the body") from exc
                if raw:
                    # Starlette's cache of the parsed body: FastAPI reads this value.
                    setattr(request, "_json", read_json(raw))  # noqa: B010
            return await handler(request)

        return strict


def _json_body(request: Request) -> bool:
    """Would FastAPI read this body as JSON (no content type, or ``*/json``, ``*+json``)?"""
    content_type = request.headers.get("content-type")
    if not content_type:
        return True
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )
