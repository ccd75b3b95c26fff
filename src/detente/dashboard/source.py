"""What the dashboard reads: one snapshot of every record, in the API's wire shapes.

This is the only module of the dashboard that talks to the service; everything after it
works on the camelCase records of API.md, so the views and templates do not change when
the dashboard moves to the client package.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from detente.clock import format_time
from detente.domain.claims.record import claim_to_wire
from detente.domain.gates.model import patch_to_wire
from detente.domain.meetings.model import meeting_to_wire
from detente.errors import DetenteError
from detente.service import Service

__all__ = ["Snapshot", "claim_overlaps", "owners_by_claim", "read_snapshot"]

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
        owners: claim id -> CODEOWNERS owners of its paths.
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
    owners: dict[str, list[str]] = field(default_factory=dict)


def owners_by_claim(service: Service, claims: Sequence[Wire]) -> dict[str, list[str]]:
    """CODEOWNERS owners of each claim's paths (a broken CODEOWNERS file means none)."""
    out: dict[str, list[str]] = {}
    lookups = {r.name: service.owners_of(r.name) for r in service.list_repos()}
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


def claim_overlaps(service: Service, claim_id: str) -> list[Wire]:
    """The live overlap report of one claim (``[]`` once it holds nothing)."""
    try:
        return list(service.claims.get_claim(claim_id).to_wire()["overlaps"])
    except DetenteError:
        return []


def read_snapshot(service: Service) -> Snapshot:
    """Read every panel's records (each area read on its own; one failing area is empty).

    Returns:
        The :class:`Snapshot`.
    """
    seq = service.head()
    served = service.list_repos()
    repos: list[Wire] = [
        {"name": r.name, "path": str(r.path) if r.path else None, "defaultBranch": r.default_branch}
        for r in served
    ]
    claims: list[Wire] = [dict(claim_to_wire(c)) for c in service.claims.list_claims()]
    meetings = [meeting_to_wire(m) for m in service.meetings.list_meetings()]
    agents = [a.to_wire() for a in service.agents.list_agents()]
    patches = [patch_to_wire(p) for p in service.patches.list_patches()]
    documents: list[Wire] = []
    deployments: list[Wire] = []
    for config in served:
        with contextlib.suppress(DetenteError):
            documents += [d.to_wire() for d in service.memory.list_documents(config.name)]
    with contextlib.suppress(DetenteError):
        deployments = [d.to_wire() for d in service.deployments.list_deployments()]
    return Snapshot(
        now=format_time(service.clock.now()),
        seq=seq,
        repos=repos,
        claims=claims,
        meetings=meetings,
        agents=agents,
        patches=patches,
        documents=documents,
        deployments=deployments,
        owners=owners_by_claim(service, claims),
    )
