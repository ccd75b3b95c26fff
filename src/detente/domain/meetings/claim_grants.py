"""The claim events that grant a claim its targets (pure): shared by the resolutions
(:mod:`detente.domain.meetings.resolution_events`), what a split grants
(:mod:`detente.domain.meetings.split_grants`) and the settling of rooms
(:mod:`detente.domain.settle`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from detente.domain import events as ev
from detente.domain.claims.model import Claim, ClaimStatus, MemoryImpact
from detente.domain.claims.transitions import allowed
from detente.domain.claims.wire import contract_to_wire, memory_impact_to_wire
from detente.domain.policy import IdSource

__all__ = ["grant_events", "grant_pending_events", "scope_body", "set_status"]


def set_status(
    ids: IdSource, claim: Claim, to: ClaimStatus, event_type: str, reason: str, **extra: Any
) -> list[ev.Event]:
    if claim.status is to or not allowed(claim.status, to):
        return []
    return [
        ev.status_event(
            ids, claim.id, event_type, to=to.value, was=claim.status.value, reason=reason, **extra
        )
    ]


def grant_events(ids: IdSource, claim: Claim, reason: str, **extra: Any) -> list[ev.Event]:
    """``claim`` becomes ``active``: its pending targets (a scope change's contested part)
    are granted first, so every target it holds carries authority."""
    if claim.status is ClaimStatus.ACTIVE or not allowed(claim.status, ClaimStatus.ACTIVE):
        return []
    out: list[ev.Event] = []
    if claim.pending_paths:
        paths = list(dict.fromkeys(claim.paths + claim.pending_paths))
        out.append(
            ev.claim_event(
                ids,
                claim.id,
                ev.CLAIM_SCOPE_CHANGED,
                **scope_body(claim, paths, claim.memory_impacts, reason),
            )
        )
    out += set_status(ids, claim, ClaimStatus.ACTIVE, ev.CLAIM_ACTIVATED, reason, **extra)
    return out


def grant_pending_events(ids: IdSource, claim: Claim, reason: str) -> list[ev.Event]:
    """An ``active`` claim's pending targets are granted (nothing contests them now)."""
    paths = list(dict.fromkeys(claim.paths + claim.pending_paths))
    return [
        ev.claim_event(
            ids,
            claim.id,
            ev.CLAIM_SCOPE_CHANGED,
            **scope_body(claim, paths, claim.memory_impacts, reason),
        )
    ]


def scope_body(
    claim: Claim,
    paths: Sequence[str],
    memory: Sequence[MemoryImpact],
    reason: str,
    named: tuple[Sequence[str], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The body of a ``claim.scope_changed``; ``named`` is ``(modules, symbols)`` when
    they change (a split), else the claim's own."""
    mods, syms = named if named is not None else (claim.modules, claim.symbols)
    return {
        "paths": list(paths),
        "pendingPaths": [],
        "addPaths": [p for p in paths if p not in claim.paths],
        "removePaths": [p for p in claim.paths + claim.pending_paths if p not in paths],
        "modules": list(mods),
        "symbols": list(syms),
        "expectedContractChanges": [contract_to_wire(c) for c in claim.expected_contract_changes],
        "memoryImpacts": [memory_impact_to_wire(m) for m in memory],
        "reason": reason,
    }
