"""An overlap report: which targets of two claims meet, how, and how badly."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from detente.domain.claims.model import Agent, ClaimStatus
from detente.domain.claims.wire import agent_to_wire


class OverlapKind(StrEnum):
    PATH = "path"
    MODULE = "module"
    SYMBOL = "symbol"
    CONTRACT = "contract"
    MEMORY = "memory"
    SEMANTIC = "semantic"


class Severity(StrEnum):
    BLOCKING = "blocking"
    ADVISORY = "advisory"
    POTENTIAL = "potential"
    """Advisory: the targets meet only in paths that exist at neither base commit."""


@dataclass(frozen=True)
class OverlapTarget:
    """One contested pair: my target, theirs, and an example both cover (``witness``).

    ``witness`` is ``None`` when the pattern search could not decide within its budget
    (:data:`~detente.domain.overlap.SEARCH_BUDGET`): the pair then counts as overlapping.
    """

    mine: str
    theirs: str
    witness: str | None

    @property
    def undecided(self) -> bool:
        """True when the overlap was not decided within the search budget."""
        return self.witness is None


@dataclass(frozen=True)
class Overlap:
    """Overlap with one other claim; its contested targets listed inside."""

    claim_id: str
    agent: Agent
    kind: OverlapKind
    severity: Severity
    targets: tuple[OverlapTarget, ...]
    reason: str
    kinds: tuple[OverlapKind, ...] = ()
    their_status: ClaimStatus = ClaimStatus.ACTIVE


def overlap_to_wire(overlap: Overlap) -> dict[str, Any]:
    """An overlap report entry: ``{claimId, agent, kind, severity, targets[], reason}``."""
    return {
        "claimId": overlap.claim_id,
        "agent": agent_to_wire(overlap.agent),
        "kind": overlap.kind.value,
        "kinds": [k.value for k in overlap.kinds],
        "severity": overlap.severity.value,
        "theirStatus": overlap.their_status.value,
        "targets": [
            {"mine": t.mine, "theirs": t.theirs, "witness": t.witness}
            | ({"undecided": True} if t.undecided else {})
            for t in overlap.targets
        ],
        "reason": overlap.reason,
    }
