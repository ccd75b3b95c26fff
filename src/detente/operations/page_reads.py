"""The dashboard's page reads: one snapshot of every record, in the API's wire shapes.

The dashboard (an adapter) reads through here, never the service: each area is read by
its declared read operation through :class:`~detente.operations.door.Operations` (the
records ``/v1`` answers), except what no operation lists yet (every claim of every
status, every deployment environment, CODEOWNERS owners of a claim's paths), which is
read here, in the application layer, the one place that meets the service.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from detente.clock import format_time
from detente.errors import DetenteError
from detente.operations.catalog import BY_NAME

if TYPE_CHECKING:
    from detente.operations.door import Operations

__all__ = ["Snapshot", "claim_overlaps", "now", "read_snapshot"]

Wire = dict[str, Any]


@dataclass(frozen=True)
class Snapshot:
    """Every record the dashboard shows, read at ``now`` (the server's clock).

    Attributes:
        now: RFC 3339 UTC time of the read (the server's clock, the lease authority).
        seq: the global event sequence the read is at least as new as.
        repos: ``[{name, path, defaultBranch}]``.
        claims: claim records (API.md "Claims"), oldest first.
        meetings: meeting records, oldest first.
        agents: agent session records (with ``status`` and ``claimIds``).
        patches: patch artifacts still waiting (status ``published``).
        documents: memory document records (with ``onDisk`` and section owners).
        deployments: ``{deployment, history[], environment, policy}`` per environment.
        resources: shared resource records (capacity, holders, waiters), by name.
        owners: claim id -> CODEOWNERS owners of its paths.
        checks: claim id -> what its work predicts (``{mergeCheck, drifted[],
            driftCheckedAt}``), for the claims that were ever checked.
    """

    now: str
    seq: int
    repos: list[Wire]
    claims: list[Wire]
    meetings: list[Wire]
    agents: list[Wire] = field(default_factory=list)
    patches: list[Wire] = field(default_factory=list)
    documents: list[Wire] = field(default_factory=list)
    deployments: list[Wire] = field(default_factory=list)
    resources: list[Wire] = field(default_factory=list)
    owners: dict[str, list[str]] = field(default_factory=dict)
    checks: dict[str, Wire] = field(default_factory=dict)


def now(ops: Operations) -> str:
    """The server's clock (the lease authority), RFC 3339 UTC."""
    return format_time(ops.service.clock.now())


def _read(ops: Operations, name: str, key: str, **query: Any) -> list[Wire]:
    """The list under ``key`` of the declared read ``name`` (``[]`` when it refuses)."""
    try:
        answer = cast("dict[str, Any]", ops.invoke(BY_NAME[name], **query))
    except DetenteError:
        return []
    return list(answer[key])


def claim_overlaps(ops: Operations, claim_id: str) -> list[Wire]:
    """The live overlap report of one claim (``[]`` once it holds nothing)."""
    try:
        view = cast("dict[str, Any]", ops.invoke(BY_NAME["get_claim"], claim_id))
    except DetenteError:
        return []
    return list(view["overlaps"])


def read_snapshot(ops: Operations) -> Snapshot:
    """Read every panel's records (each area read on its own; one failing area is empty).

    Returns:
        The :class:`Snapshot`.

    Raises:
        ForbiddenError: ``forbidden`` for a principal without the ``read`` role.
    """
    from detente.domain.claims.record import claim_to_wire

    ops.authorize(BY_NAME["list_claims"])  # the read role: claims are read directly below
    service = ops.service
    seq = service.head()
    served = service.list_repos()
    repos: list[Wire] = [
        {"name": r.name, "path": str(r.path) if r.path else None, "defaultBranch": r.default_branch}
        for r in served
    ]
    claims: list[dict[str, Any]] = [dict(claim_to_wire(c)) for c in service.claims.list_claims()]
    documents: list[Wire] = []
    for config in served:
        documents += _read(ops, "list_documents", "documents", repo=config.name)
    deployments: list[Wire] = []
    with contextlib.suppress(DetenteError):
        deployments = [d.to_wire() for d in service.deployments.list_deployments()]
    lookups = {r.name: service.owners_of(r.name) for r in served}
    return Snapshot(
        now=now(ops),
        seq=seq,
        repos=repos,
        claims=claims,
        meetings=_read(ops, "list_meetings", "meetings"),
        agents=_read(ops, "list_agents", "agents"),
        patches=_read(ops, "list_patches", "patches"),
        documents=documents,
        deployments=deployments,
        resources=_read(ops, "list_resources", "resources"),
        owners=_owners_by_claim(lookups, claims),
        checks=service.merge_checks.advisories(),
    )


def _owners_by_claim(lookups: dict[str, Any], claims: Sequence[Wire]) -> dict[str, list[str]]:
    """CODEOWNERS owners of each claim's paths (a broken CODEOWNERS file means none)."""
    out: dict[str, list[str]] = {}
    for claim in claims:
        lookup = lookups.get(claim["repo"])
        owners: list[str] = []
        if lookup is not None:
            with contextlib.suppress(DetenteError, OSError, ValueError):
                owners = lookup([_representative(p) for p in claim["paths"]])[0]
        out[claim["id"]] = owners
    return out


def _representative(pattern: str) -> str:
    """A file path standing for ``pattern`` in a CODEOWNERS lookup: its literal prefix
    (up to the first glob character), plus a file name when that prefix is a directory."""
    cut = min((i for i, ch in enumerate(pattern) if ch in "*?["), default=len(pattern))
    literal = pattern[:cut]
    if cut < len(pattern):
        literal = literal[: literal.rfind("/") + 1]
    return literal + "_" if literal.endswith("/") or not literal else literal
