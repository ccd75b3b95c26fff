"""The fold of the gates: evidence and integration on claims, patches, environments.

:func:`apply_gate_event` is the one entry :meth:`RepoState.apply` calls for the event
types in :data:`GATE_EVENT_TYPES`:

- ``claim.ready_for_review`` / ``claim.integrated`` / ``claim.integration_stale`` /
  ``claim.completed``: the claim's status, plus its ``evidence`` (accepted evidence; marked
  ``stale`` when the integration lost its compare-and-swap) and ``integration`` (the ref
  move, or the stale-base outcome);
- ``patch.*``: :class:`Patch` records in ``state.gates.patches``;
- ``deployment.*``: :class:`Environment` records in ``state.gates.environments``.

It imports nothing from the state or decision modules (``state.py`` depends on it).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.gates.model import (
    Environment,
    Patch,
)

if TYPE_CHECKING:
    from detente.domain.state import RepoState

__all__ = [
    "GATE_EVENT_TYPES",
    "apply_gate_event",
]

GATE_EVENT_TYPES = ev.GATE_EVENT_TYPES


def apply_gate_event(
    state: RepoState, event_type: str, data: dict[str, Any], at: datetime, event_id: str
) -> list[tuple[Claim, Claim]]:
    """Fold one gate event (see the module docstring).

    Returns:
        The claims it changed as ``(old, new)`` pairs (revision, time and last event id
        already advanced); the caller stores them so its indexes follow.
    """
    if event_type.startswith("claim."):
        old = state.claims.get(str(data.get("claimId")))
        if old is None:
            return []
        new = _evolve_claim(old, event_type, data, at)
        new = replace(new, revision=old.revision + 1, updated_at=at, last_event_id=event_id)
        return [(old, new)]
    if event_type.startswith("patch."):
        _apply_patch(state, event_type, data, at, event_id)
    elif event_type.startswith("deployment."):
        _apply_deployment(state, event_type, data, at, event_id)
    return []


def _evolve_claim(claim: Claim, event_type: str, data: dict[str, Any], at: datetime) -> Claim:
    status = ClaimStatus(data["status"])
    reason = data.get("reason", claim.status_reason)
    claim = replace(claim, status=status, status_reason=reason)
    if event_type == ev.CLAIM_READY_FOR_REVIEW:
        return replace(claim, evidence=dict(data["evidence"]))
    if event_type == ev.CLAIM_INTEGRATED:
        integration = {
            "outcome": "integrated",
            "ref": data["ref"],
            "oldOid": data["oldOid"],
            "newOid": data["newOid"],
            "fencingToken": data.get("fencingToken"),
            "at": format_time(at),
        }
        return replace(claim, integration=integration)
    if event_type == ev.CLAIM_INTEGRATION_STALE:
        stale = dict(claim.evidence or {})
        stale.update({"stale": True, "staleReason": reason})
        integration = {
            "outcome": "stale_base",
            "ref": data["ref"],
            "expectedOid": data["expectedOid"],
            "actualOid": data["actualOid"],
            "at": format_time(at),
        }
        return replace(claim, evidence=stale, integration=integration)
    if event_type == ev.CLAIM_COMPLETED and data.get("evidence"):
        merged = dict(claim.evidence or {})
        merged.update(data["evidence"])
        return replace(claim, evidence=merged)
    return claim


def _apply_patch(
    state: RepoState, event_type: str, data: dict[str, Any], at: datetime, event_id: str
) -> None:
    patches = state.gates.patches
    patch_id = str(data["patchId"])
    if event_type == ev.PATCH_PUBLISHED:
        patches[patch_id] = Patch(
            id=patch_id,
            repo=state.repo,
            claim_id=str(data["claimId"]),
            base_commit=str(data["baseCommit"]),
            sha256=str(data["sha256"]),
            size=int(data["size"]),
            files=tuple(str(f) for f in data["files"]),
            commits=int(data["commits"]),
            status="published",
            revision=1,
            created_at=at,
            updated_at=at,
            mbox=str(data["mbox"]),
            last_event_id=event_id,
        )
        return
    old = patches.get(patch_id)
    if old is None:
        return
    status = "integrated" if event_type == ev.PATCH_INTEGRATED else "discarded"
    patches[patch_id] = replace(
        old,
        status=status,
        reason=data.get("reason"),
        revision=old.revision + 1,
        updated_at=at,
        last_event_id=event_id,
    )


def _apply_deployment(
    state: RepoState, event_type: str, data: dict[str, Any], at: datetime, event_id: str
) -> None:
    envs = state.gates.environments
    env_id = str(data["environmentId"])
    old = envs.get(env_id) or Environment(
        id=env_id,
        repo=state.repo,
        name=str(data["environment"]),
        revision=0,
        created_at=at,
        updated_at=at,
    )
    new = replace(old, revision=old.revision + 1, updated_at=at, last_event_id=event_id)
    if event_type == ev.DEPLOYMENT_RECORDED:
        record = {
            "claimId": data["claimId"],
            "commitOid": data["commitOid"],
            "prevCommitOid": data.get("prevCommitOid"),
            "migrations": list(data.get("migrations", ())),
            "unresolvedRisks": list(data.get("unresolvedRisks", ())),
            "at": format_time(at),
            "eventId": event_id,
        }
        new = replace(new, current=record, history=(*old.history, record))
    elif event_type == ev.DEPLOYMENT_POLICY_SET:
        new = replace(new, policy=dict(data["policy"]))
    envs[env_id] = new
