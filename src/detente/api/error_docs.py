"""Which refusals each operation can answer: the error half of ``/openapi.json``.

Every operation can answer the edge's errors (:data:`COMMON`: an unknown route or id,
a body over the limit, a malformed request, authentication, an internal or store
failure). :data:`CONFLICTS` lists, per operation (by its ``operationId``, its declared
name, :mod:`detente.operations`), the ``409`` codes its decision can raise
(:mod:`detente.errors`, API.md "Errors"); :data:`FORBIDDEN` the operations whose
decision itself can refuse with ``403 forbidden`` beyond the authentication roles. Both
are read from the declarations.
"""

from __future__ import annotations

from typing import Final

from detente.operations.catalog import OPERATIONS

__all__ = ["COMMON", "CONFLICTS", "FORBIDDEN", "error_statuses"]

#: Status -> (codes, when): answered by every operation.
COMMON: Final[dict[int, tuple[tuple[str, ...], str]]] = {
    401: (("unauthenticated",), "the server authenticates; credentials missing or invalid"),
    403: (("forbidden",), "the principal may not act on this record (role, ownership, origin)"),
    404: (("not_found",), "unknown id (the body names it) or unknown route"),
    405: (("method_not_allowed",), "the path exists, the method does not (see ``Allow``)"),
    413: (("payload_too_large",), "the request body is over the server's limit"),
    422: (
        ("validation_error",),
        "malformed body, parameter or header, or a value the operation refuses; "
        "``field`` names it (dotted path), ``errors`` lists every problem",
    ),
    500: (("internal_error", "vcs_error"), "a bug (``incidentId`` in the body) or git failed"),
    503: (
        ("store_unavailable", "store_concurrency", "issuer_unavailable"),
        "the store, or the OIDC issuer's keys, cannot be reached or is busy",
    ),
}

#: operationId -> the 409 codes its decision can raise (its declaration's ``conflicts``).
CONFLICTS: Final[dict[str, tuple[str, ...]]] = {
    op.name: op.conflicts for op in OPERATIONS if op.conflicts
}

#: Operations whose decision refuses with ``403 forbidden`` (e.g. a memory class that
#: forbids the write, a participant that is not the meeting's, a takeover not allowed):
#: those declared ``refuses``.
FORBIDDEN: Final[frozenset[str]] = frozenset(op.name for op in OPERATIONS if op.refuses)


def error_statuses(operation_id: str) -> dict[int, tuple[tuple[str, ...], str]]:
    """Status -> (codes, when) for ``operation_id``: :data:`COMMON` and its conflicts."""
    statuses = dict(COMMON)
    conflicts = CONFLICTS.get(operation_id)
    if conflicts:
        statuses[409] = (
            conflicts,
            "the operation conflicts with the current record: "
            "``current``, ``expected`` and ``actual`` say what differs",
        )
    if operation_id in FORBIDDEN:
        codes, _ = statuses[403]
        statuses[403] = (codes, "the principal or the record forbids this operation")
    return dict(sorted(statuses.items()))
