"""The OpenAPI document says what the API really answers: errors are problem+json.

FastAPI documents a ``422`` with its own ``HTTPValidationError`` body; detente answers
every error as an RFC 9457 problem (:mod:`detente.api.problems`, :mod:`detente.api.edges`).
:func:`install` rewrites the generated document once: a ``Problem`` schema, and on every
operation the error statuses it can answer (``404``, ``405``, ``409``, ``413``, ``422``,
``500``, ``503``) as ``application/problem+json``. ``schemathesis`` checks the running
API against this document in the test suite (``tests/api/test_api_schema.py``).
"""

from __future__ import annotations

from typing import Any, Final

from fastapi import FastAPI

__all__ = ["PROBLEM_SCHEMA", "install"]

#: JSON Schema of a problem body (API.md "Errors"); extra members are allowed.
PROBLEM_SCHEMA: Final[dict[str, Any]] = {
    "title": "Problem",
    "type": "object",
    "required": ["type", "title", "status", "detail", "code"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {"type": "string", "description": "stable machine-readable error code"},
        "field": {"type": ["string", "null"]},
    },
    "additionalProperties": True,
}

_ERRORS: Final = {
    "404": "not_found: unknown id or route",
    "405": "method_not_allowed",
    "409": "a conflict: revision_conflict, stale_base, lease_expired, overlap_blocking, ...",
    "413": "payload_too_large: the body is over the server's limit",
    "422": "validation_error: malformed body, parameter or header; field names it",
    "500": "internal_error (incident id in the body) or vcs_error",
    "503": "store_unavailable",
}


def install(app: FastAPI) -> None:
    """Make ``app.openapi()`` document problem+json errors on every operation."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = generate()
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        schemas["Problem"] = PROBLEM_SCHEMA
        problem = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                responses = operation.setdefault("responses", {})
                for status, description in _ERRORS.items():
                    responses[status] = {"description": description, "content": problem}
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]
