"""Errors as ``application/problem+json`` (RFC 9457), one table from code to status."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from detente.errors import (
    DetenteError,
    IssuerUnavailable,
    RateLimited,
    Unauthenticated,
    ValidationError,
)
from detente.operations.body import invalid

#: The HTTP edge's mapping from stable error code to status (API.md "Errors").
STATUS_BY_CODE: dict[str, int] = {
    "validation_error": 422,
    "unauthenticated": 401,
    "forbidden": 403,
    "rate_limited": 429,
    "not_found": 404,
    "revision_conflict": 409,
    "stale_base": 409,
    "lease_expired": 409,
    "invalid_transition": 409,
    "overlap_blocking": 409,
    "stale_fencing_token": 409,
    "evidence_rejected": 409,
    "branch_in_use": 409,
    "resource_busy": 409,
    "out_of_scope": 409,
    "conflict": 409,
    "vcs_error": 500,
    "store_unavailable": 503,
    "store_concurrency": 503,
    "issuer_unavailable": 503,
}

_TITLES = {
    "validation_error": "Invalid request",
    "not_found": "Not found",
    "revision_conflict": "Revision conflict",
    "lease_expired": "Lease expired",
    "invalid_transition": "Invalid transition",
    "overlap_blocking": "Blocking overlap",
    "stale_base": "Stale base",
    "resource_busy": "Resource busy",
}


class ProblemResponse(JSONResponse):
    """``application/problem+json``; text that is not Unicode (a lone surrogate echoed from
    a request) is written as its JSON escape instead of failing the answer."""

    media_type = "application/problem+json"

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8", "backslashreplace")


def problem(status: int, code: str, detail: str, **extra: Any) -> JSONResponse:
    body: dict[str, Any] = {
        "type": f"https://detente.dev/problems/{code.replace('_', '-')}",
        "title": _TITLES.get(code, code.replace("_", " ").capitalize()),
        "status": status,
        "detail": detail,
        "code": code,
    }
    body.update(extra)
    return ProblemResponse(body, status_code=status)


async def detente_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, DetenteError)
    fields = exc.to_problem()
    if isinstance(exc, ValidationError):
        fields["field"] = exc.field  # always present, null when no field is to blame
    code = fields.pop("code")
    detail = fields.pop("detail")
    response = problem(STATUS_BY_CODE.get(code, 500), code, detail, **fields)
    if isinstance(exc, Unauthenticated):
        response.headers["WWW-Authenticate"] = exc.challenge
    if isinstance(exc, RateLimited | IssuerUnavailable):
        response.headers["Retry-After"] = str(exc.retry_after)
    return response


async def validation_error_handler(request: Request, exc: Exception) -> JSONResponse:
    """A malformed request: ``422 validation_error`` naming the first field (the same
    error :func:`detente.operations.body.invalid` gives the in-process client)."""
    assert isinstance(exc, RequestValidationError)
    error = invalid(exc.errors())
    fields = error.to_problem()
    fields["field"] = error.field  # always present, null when no field is to blame
    return problem(422, fields.pop("code"), fields.pop("detail"), **fields)
