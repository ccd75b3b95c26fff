"""The claim commands: open, renew, change scope, set status, take over.

Plain frozen records of what a caller asked; the decisions that check them live in
:mod:`.decide`, :mod:`.opening` and :mod:`.takeover`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from detente.domain.claims.declared import NO_FACTS, Declared
from detente.domain.claims.model import Agent, ClaimStatus, ContractChange, MemoryImpact

#: An expected contract change as a seed gives it: an area, ``{type, area, change}``, or
#: the record itself.
ContractSeed = str | Mapping[str, Any] | ContractChange


@dataclass(frozen=True)
class OpenClaim:
    """Seed of a new claim (API.md ``POST /v1/claims``)."""

    repo: str
    objective: str
    base_commit: str
    agent: Agent
    lease_ttl_seconds: int
    paths: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    expected_contract_changes: tuple[ContractSeed, ...] = ()
    test_responsibility: tuple[str, ...] | Mapping[str, Sequence[str]] = ()
    memory_impacts: tuple[MemoryImpact, ...] = ()
    branch: str | None = None
    worktree: str | None = None
    claim_id: str | None = None
    advisory: bool = False
    draft: bool = False
    #: Create the claim's branch and worktree inside the command (the service places
    #: them: ``branch``/``worktree`` when given, else the defaults).
    create_worktree: bool = False
    #: The optional facts it declares (:mod:`.declared`).
    declared: Declared = NO_FACTS


@dataclass(frozen=True)
class RenewLease:
    claim_id: str
    expected_lease_revision: int
    expected_claim_revision: int
    ttl_seconds: int


@dataclass(frozen=True)
class ChangeScope:
    claim_id: str
    expected_claim_revision: int
    add_paths: tuple[str, ...] = ()
    remove_paths: tuple[str, ...] = ()
    add_modules: tuple[str, ...] = ()
    add_symbols: tuple[str, ...] = ()
    add_expected_contract_changes: tuple[ContractSeed, ...] = ()
    reason: str | None = None
    remove_modules: tuple[str, ...] = ()
    remove_symbols: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangeObjective:
    claim_id: str
    expected_claim_revision: int
    objective: str
    reason: str | None = None


@dataclass(frozen=True)
class SetStatus:
    """Suspend, resume or abandon. ``details`` carries the abandonment record."""

    claim_id: str
    expected_claim_revision: int
    to: ClaimStatus
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------- helpers


@dataclass(frozen=True)
class TakeoverRequest:
    """``takeoverOf {claimId, expectedClaimRevision, pieces[{target, decision}]}``."""

    claim_id: str
    expected_claim_revision: int
    pieces: tuple[tuple[str, str], ...] = ()
