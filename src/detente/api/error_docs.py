"""Which refusals each operation can answer: the error half of ``/openapi.json``.

Every operation can answer the edge's errors (:data:`COMMON`: an unknown route or id,
a body over the limit, a malformed request, authentication, an internal or store
failure). :data:`CONFLICTS` lists, per operation (by its ``operationId``, the
:mod:`detente.client.routes` name), the ``409`` codes its decision can raise
(:mod:`detente.errors`, API.md "Errors"); :data:`FORBIDDEN` the operations whose
decision itself can refuse with ``403 forbidden`` beyond the authentication roles.
"""

from __future__ import annotations

from typing import Final

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

_CLAIM_WRITE = ("revision_conflict", "lease_expired", "invalid_transition")
_TAKEOVER = (*_CLAIM_WRITE, "branch_in_use", "stale_base")
_MEETING = ("revision_conflict", "lease_expired", "invalid_transition")
_MEMORY_WRITE = (
    "revision_conflict",
    "stale_fencing_token",
    "overlap_blocking",
    "lease_expired",
    "invalid_transition",
)

#: operationId -> the 409 codes its decision can raise.
CONFLICTS: Final[dict[str, tuple[str, ...]]] = {
    "open_claim": _TAKEOVER,
    "takeover": _TAKEOVER,
    "approve_takeover": ("revision_conflict", "invalid_transition"),
    "announce": (*_CLAIM_WRITE, "branch_in_use", "stale_base"),
    "renew": _CLAIM_WRITE,
    "scope_change": (*_CLAIM_WRITE, "overlap_blocking"),
    "change_objective": _CLAIM_WRITE,
    "suspend": _CLAIM_WRITE,
    "resume": (*_CLAIM_WRITE, "overlap_blocking"),
    "abandon": _CLAIM_WRITE,
    "complete": (*_CLAIM_WRITE, "stale_base", "stale_fencing_token", "evidence_rejected"),
    "cleanup": ("invalid_transition",),
    "check_writes": (
        "overlap_blocking",
        "out_of_scope",
        "stale_fencing_token",
        "lease_expired",
        "invalid_transition",
    ),
    "propose": _MEETING,
    "accept_proposal": _MEETING,
    "resolve_meeting": _MEETING,
    "accept_handoff": _MEETING,
    "register_document": ("revision_conflict",),
    "patch_section": _MEMORY_WRITE,
    "write_document": _MEMORY_WRITE,
    "append_entry": _MEMORY_WRITE,
    "render": ("revision_conflict",),
    "reconcile": ("revision_conflict", "invalid_transition"),
    "publish_patch": ("revision_conflict", "invalid_transition"),
    "discard_patch": ("revision_conflict", "invalid_transition"),
    "deploy": ("stale_base", "evidence_rejected", "revision_conflict"),
    "set_deploy_policy": ("revision_conflict",),
    "pre_receive": ("evidence_rejected",),
}

#: Operations whose decision refuses with ``403 forbidden`` (e.g. a memory class that
#: forbids the write, a participant that is not the meeting's, a takeover not allowed).
FORBIDDEN: Final[frozenset[str]] = frozenset(
    {
        "open_claim",
        "takeover",
        "approve_takeover",
        "propose",
        "accept_proposal",
        "resolve_meeting",
        "accept_handoff",
        "patch_section",
        "write_document",
        "append_entry",
        "reconcile",
    }
)


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
