"""The parts of a claim record to and from their camelCase JSON shape (API.md), with no
IO; the whole record is :mod:`detente.domain.claims.record`'s.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from detente.domain.claims.model import (
    Abandonment,
    Agent,
    Claim,
    ContractChange,
    MemoryImpact,
    SemanticRecord,
    canonical_memory_mode,
)

if TYPE_CHECKING:  # the record module imports this one
    from detente.domain.claims.record import Abandonment as AbandonmentRecord
    from detente.domain.claims.record import AgentRef as AgentRecord
    from detente.domain.claims.record import ContractChange as ContractRecord
    from detente.domain.claims.record import MemoryImpact as MemoryImpactRecord


def agent_to_wire(agent: Agent) -> AgentRecord:
    return {"id": agent.id, "name": agent.name, "sessionId": agent.session_id}


def agent_from_wire(data: dict[str, Any]) -> Agent:
    """The agent of a stored payload; its id and name interned (one agent names many
    claims: each record shares the one string)."""
    return Agent(
        id=sys.intern(str(data["id"])),
        name=sys.intern(str(data["name"])),
        session_id=data.get("sessionId"),
    )


def semantic_from_wire(data: Any, claims: Mapping[str, Claim]) -> SemanticRecord | None:
    """The :class:`SemanticRecord` of a stored ``semantic`` payload (None: none or not an
    object). A similar claim's id is the string of that claim's own record when ``claims``
    holds it (10 references a claim, one string); entries that are not
    ``{claimId, score}`` objects with a numeric score are skipped."""
    if not isinstance(data, dict):
        return None
    similar = []
    for entry in data.get("similar") or ():
        score = entry.get("score") if isinstance(entry, dict) else None
        if "claimId" not in entry or not isinstance(score, int | float):
            continue
        claim_id = str(entry["claimId"])
        known = claims.get(claim_id)
        similar.append((known.id if known is not None else claim_id, float(score)))
    at = data.get("at")
    return SemanticRecord(
        mode=sys.intern(str(data.get("mode", ""))),
        threshold=float(data.get("threshold", 0.0)),
        similar=tuple(similar),
        at=str(at) if at else None,
    )


def memory_impact_to_wire(impact: MemoryImpact) -> MemoryImpactRecord:
    return {"path": impact.path, "mode": impact.mode, "sections": list(impact.sections)}


def contract_to_wire(change: ContractChange) -> str | ContractRecord:
    """A plain area as a string (the seed's shape), else ``{type, area, change}``."""
    if change.type is None and change.change is None:
        return change.area
    return {"type": change.type, "area": change.area, "change": change.change}


def contract_from_wire(data: Any) -> ContractChange:
    if isinstance(data, dict):
        kind, what = data.get("type"), data.get("change")
        return ContractChange(
            area=str(data["area"]),
            type=str(kind) if kind is not None else None,
            change=str(what) if what is not None else None,
        )
    return ContractChange(area=str(data))


def tests_to_wire(claim: Claim) -> list[str] | dict[str, list[str]]:
    """The seed's shape: a list of test names, or ``{unit: [...], integration: [...], ...}``."""
    if claim.test_plan is not None:
        return {kind: list(names) for kind, names in claim.test_plan.items()}
    return list(claim.test_responsibility)


def contract_text(wire: str | Mapping[str, Any]) -> str:
    """A contract change as people write it: ``TYPE:AREA:CHANGE``, or the bare area."""
    if isinstance(wire, str):
        return wire
    return ":".join(str(wire.get(k) or "") for k in ("type", "area", "change"))


def tests_text(wire: Sequence[str] | Mapping[str, Sequence[str]]) -> str:
    """The test responsibility as one line: ``a, b`` or ``unit: a, b; integration: c``."""
    if isinstance(wire, Mapping):
        return "; ".join(f"{kind}: {', '.join(names)}" for kind, names in wire.items() if names)
    return ", ".join(str(t) for t in wire)


def memory_impact_from_wire(data: dict[str, Any]) -> MemoryImpact:
    return MemoryImpact(
        path=str(data["path"]),
        mode=canonical_memory_mode(str(data.get("mode", "section"))),
        sections=tuple(str(s) for s in data.get("sections", ())),
    )


def abandonment_to_wire(a: Abandonment) -> AbandonmentRecord:
    return {
        "headCommit": a.head_commit,
        "diffSummary": a.diff_summary,
        "memoryState": a.memory_state,
        "reason": a.reason,
    }
