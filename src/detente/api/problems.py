"""Errors as ``application/problem+json`` (RFC 9457), one table from code to status."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from detente.errors import DetenteError

#: The HTTP edge's mapping from stable error code to status (API.md "Errors").
STATUS_BY_CODE: dict[str, int] = {
    "validation_error": 422,
    "unauthenticated": 401,
    "forbidden": 403,
    "not_found": 404,
    "revision_conflict": 409,
    "stale_base": 409,
    "lease_expired": 409,
    "invalid_transition": 409,
    "overlap_blocking": 409,
    "stale_fencing_token": 409,
    "evidence_rejected": 409,
    "branch_in_use": 409,
    "out_of_scope": 409,
    "conflict": 409,
    "vcs_error": 500,
    "store_unavailable": 503,
    "store_concurrency": 503,
}

_TITLES = {
    "validation_error": "Invalid request",
    "not_found": "Not found",
    "revision_conflict": "Revision conflict",
    "lease_expired": "Lease expired",
    "invalid_transition": "Invalid transition",
    "overlap_blocking": "Blocking overlap",
    "stale_base": "Stale base",
}


def problem(status: int, code: str, detail: str, **extra: Any) -> JSONResponse:
    body: dict[str, Any] = {
        "type": f"https://detente.dev/problems/{code.replace('_', '-')}",
        "title": _TITLES.get(code, code.replace("_", " ").capitalize()),
        "status": status,
        "detail": detail,
        "code": code,
    }
    body.update(extra)
    return JSONResponse(body, status_code=status, media_type="application/problem+json")


async def detente_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, DetenteError)
    fields = exc.to_problem()
    code = fields.pop("code")
    detail = fields.pop("detail")
    return problem(STATUS_BY_CODE.get(code, 500), code, detail, **fields)


async def validation_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    first = errors[0] if errors else {}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")]
    field = ".".join(loc) or None
    message = str(first.get("msg", "invalid request"))
    if first.get("type") == "json_invalid":  # loc is a character offset, not a field
        field = None
        message = f"the request body is not valid JSON ({message} at offset {loc[0] if loc else 0})"
    detail = f"{field}: {message}" if field else message
    return problem(
        422,
        "validation_error",
        detail,
        field=field,
        errors=[
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg"))} for e in errors
        ],
    )
