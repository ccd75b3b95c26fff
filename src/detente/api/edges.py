"""Every HTTP error is ``application/problem+json`` with a stable ``code``.

:mod:`detente.api.problems` renders detente's own errors; this module covers what
happens around the routes:

=====================================  ======  =========================
what                                   status  ``code``
=====================================  ======  =========================
unknown route                          404     ``not_found``
method not allowed (``Allow`` header)  405     ``method_not_allowed``
body over the limit                    413     ``payload_too_large``
body not UTF-8, nested too deeply, or  422     ``validation_error``
otherwise unparseable
any other Starlette ``HTTPException``  its     ``http_error``
unexpected exception (logged)          500     ``internal_error``
=====================================  ======  =========================

The body limit is :class:`BodyLimitMiddleware`: a ``Content-Length`` over the limit is
refused before a byte of the body is read, and a chunked body as soon as the bytes
received pass it, so a huge body is never buffered. (FastAPI's own ``max_body_size``
answers ``text/plain`` whenever the declared length is over the limit, whatever the
handlers render, so it cannot give the documented shape.)
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Final

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from detente.api.problems import problem

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "BodyLimitMiddleware",
    "BodyTooLarge",
    "http_error_handler",
    "http_problem",
    "unexpected_error_handler",
]

#: The default request body limit in bytes (1 MiB); ``detente serve --max-body-bytes``.
DEFAULT_MAX_BODY_BYTES: Final = 1 << 20

_log = logging.getLogger("detente.api")

_METHODS: Final = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")

_CODE_BY_STATUS: Final = {
    400: "validation_error",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
}


class BodyTooLarge(Exception):
    """The request body passed the limit while being read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is larger than the limit of {limit} bytes")
        self.limit = limit


class BodyLimitMiddleware:
    """Refuse a request body over ``max_body_bytes`` with ``413 payload_too_large``.

    Args:
        app: the application.
        max_body_bytes: the limit in bytes.
    """

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_body_bytes
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _too_large(limit)(scope, receive, send)
            return
        received = 0
        started = False

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, watch)
        except BodyTooLarge:
            if started:
                raise
            await _too_large(limit)(scope, receive, send)


def _too_large(limit: int) -> JSONResponse:
    return http_problem(413, f"the request body is larger than the limit of {limit} bytes")


def http_problem(
    status: int, detail: str, *, code: str | None = None, **extra: Any
) -> JSONResponse:
    """A problem response for a Starlette-level status (``code`` from the module table)."""
    return problem(status, code or _CODE_BY_STATUS.get(status, "http_error"), detail, **extra)


async def http_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's ``HTTPException`` (routing, body parsing, limits) as a problem."""
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    if status == 404 and exc.detail == "Not Found":
        detail = f"no route {request.method} {request.url.path}"
    elif status == 405:
        allowed = _allowed_methods(request)  # every route of the path, not just the first
        exc.headers = {**(exc.headers or {}), "Allow": allowed}
        detail = f"{request.method} is not allowed on {request.url.path}" + (
            f" (allowed: {allowed})" if allowed else ""
        )
    elif isinstance(exc.__cause__, BodyTooLarge):  # FastAPI wraps it in a bare 400
        status, detail = 413, str(exc.__cause__)
    elif status == 400:
        # FastAPI answers 400 for a body it cannot decode; every malformed body is a
        # 422 validation_error here, like a body that is not JSON at all.
        status, detail = 422, _parse_failure(exc)
    else:
        detail = str(exc.detail)
    code = "validation_error" if status == 422 else None
    response = http_problem(status, detail, code=code)
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response


def _allowed_methods(request: Request) -> str:
    """The ``Allow`` value (RFC 9110 section 10.2.1): the methods of every route of the path.

    Starlette names only the first route whose path matched; a path served by several
    routes (``GET`` and ``POST /v1/claims``) allows all of theirs.
    """
    allowed: list[str] = []
    for method in _METHODS:
        probe = {**request.scope, "method": method}
        if any(route.matches(probe)[0] is Match.FULL for route in request.app.router.routes):
            allowed.append(method)
    return ", ".join(allowed)


def _parse_failure(exc: StarletteHTTPException) -> str:
    """Name why FastAPI could not parse a body (it raises a bare 400 for these)."""
    cause = exc.__cause__
    if isinstance(cause, UnicodeDecodeError):
        return f"the request body is not valid UTF-8 (byte {cause.start})"
    if isinstance(cause, RecursionError):
        return "the request body is not valid JSON: it nests too deeply"
    if exc.detail == "There was an error parsing the body":
        return "the request body is not valid JSON"
    return str(exc.detail)


async def unexpected_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """An exception nobody translated: logged with an id, answered as a 500 problem."""
    incident = uuid.uuid4().hex[:12]
    _log.error(
        "unexpected error on %s %s (incident %s)",
        request.method,
        request.url.path,
        incident,
        exc_info=exc,
        extra={"incident": incident, "method": request.method, "path": request.url.path},
    )
    return problem(
        500,
        "internal_error",
        f"unexpected server error (incident {incident}); the server log has the details",
        incident=incident,
    )


class UnexpectedErrorMiddleware:
    """Answers an exception nobody translated with the 500 problem, and keeps the
    connection open for the client's next request.

    Starlette's outermost error middleware answers too, but then re-raises, and the server
    drops the connection: a client's next request on it (a pooled keep-alive connection)
    fails with a reset, and its caller cannot tell whether it was applied. Sits inside the
    idempotency middleware, which keeps no 5xx answer. An exception after the answer has
    started (a stream) is re-raised: there is nothing left to answer.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as exc:
            if started:
                raise
            response = await unexpected_error_handler(Request(scope), exc)
            await response(scope, receive, send)
