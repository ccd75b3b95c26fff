"""Compact shapes of API records for agents: ids first, nulls and empties dropped.

Inputs are API.md's camelCase records (from either client); outputs are what the
tools return. Nothing here talks to detente.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from detente.domain.claims.model import HOLDING_STATUSES, ClaimStatus

__all__ = [
    "agent_brief",
    "claim_brief",
    "claim_detail",
    "event_brief",
    "holding",
    "meeting_brief",
    "overlap_brief",
    "prune",
]

_HOLDING = frozenset(s.value for s in HOLDING_STATUSES)


def prune(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without ``None`` values, empty lists and empty dicts (order kept)."""
    return {k: v for k, v in data.items() if v is not None and v != [] and v != {}}


def holding(claim: Mapping[str, Any]) -> bool:
    """Whether a wire claim still holds its targets (an expired advisory claim does not)."""
    status = str(claim.get("status"))
    if claim.get("advisory") and status == ClaimStatus.EXPIRED.value:
        return False
    return status in _HOLDING


def claim_brief(claim: Mapping[str, Any]) -> dict[str, Any]:
    """``{claimId, status, revision, leaseRevision, expiresAt, fencingToken, paths, ...}``."""
    lease = claim.get("lease") or {}
    agent = claim.get("agent") or {}
    return prune(
        {
            "claimId": claim.get("id"),
            "status": claim.get("status"),
            "revision": claim.get("revision"),
            "leaseRevision": lease.get("revision"),
            "expiresAt": lease.get("expiresAt"),
            "fencingToken": claim.get("fencingToken"),
            "sessionId": agent.get("sessionId"),
            "advisory": claim.get("advisory") or None,
            "paths": claim.get("paths"),
            "pendingPaths": claim.get("pendingPaths"),
            "modules": claim.get("modules"),
            "symbols": claim.get("symbols"),
            "meetingIds": claim.get("meetingIds"),
        }
    )


def claim_detail(claim: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`claim_brief` plus objective, holder, reason and abandonment."""
    agent = claim.get("agent") or {}
    return prune(
        {
            **claim_brief(claim),
            "objective": claim.get("objective"),
            "agentName": agent.get("name"),
            "statusReason": claim.get("statusReason"),
            "baseCommit": claim.get("baseCommit"),
            "branch": claim.get("branch"),
            "worktree": claim.get("worktree"),
            "abandonment": claim.get("abandonment"),
        }
    )


def overlap_brief(overlap: Mapping[str, Any]) -> dict[str, Any]:
    """``{claimId, sessionId, agentName, severity, kind, witness, reason}``."""
    agent = overlap.get("agent") or {}
    targets = overlap.get("targets") or [{}]
    return prune(
        {
            "claimId": overlap.get("claimId"),
            "sessionId": agent.get("sessionId"),
            "agentName": agent.get("name"),
            "severity": overlap.get("severity"),
            "kind": overlap.get("kind"),
            "witness": targets[0].get("witness"),
            "reason": overlap.get("reason"),
        }
    )


def agent_brief(agent: Mapping[str, Any]) -> dict[str, Any]:
    """``{sessionId, agentName, status, intent, branch, worktree, expiresAt, lastSeen,
    claimIds}`` (``lastSeen``: the last registration, i.e. heartbeat)."""
    return prune(
        {
            "sessionId": agent.get("sessionId"),
            "agentName": agent.get("agentName"),
            "status": agent.get("status"),
            "intent": agent.get("intent") or None,
            "branch": agent.get("branch"),
            "worktree": agent.get("worktree"),
            "expiresAt": agent.get("expiresAt"),
            "lastSeen": agent.get("updatedAt"),
            "claimIds": agent.get("claimIds"),
        }
    )


def meeting_brief(meeting: Mapping[str, Any]) -> dict[str, Any]:
    """``{meetingId, status, revision, participants, contested, proposals, deadline, ...}``."""
    return prune(
        {
            "meetingId": meeting.get("id"),
            "status": meeting.get("status"),
            "revision": meeting.get("revision"),
            "participants": meeting.get("participants"),
            "contested": [
                {"target": t.get("target"), "claimIds": t.get("claimIds")}
                for t in meeting.get("contestedTargets") or []
            ],
            "proposals": [
                prune(
                    {
                        "proposalId": p.get("id"),
                        "claimId": p.get("claimId"),
                        "type": (p.get("resolution") or {}).get("type"),
                        "status": p.get("status"),
                        "acceptedBy": p.get("acceptedBy"),
                    }
                )
                for p in meeting.get("proposals") or []
            ],
            "resolution": meeting.get("resolution"),
            "deadline": meeting.get("deadline"),
            "options": meeting.get("options") if meeting.get("status") == "open" else None,
        }
    )


def event_brief(event: Mapping[str, Any]) -> dict[str, Any]:
    """``{seq, type, subject, at, data}`` (hashes left out: verify with the audit API)."""
    return {
        "seq": event.get("seq"),
        "type": event.get("type"),
        "subject": event.get("subject"),
        "at": event.get("at"),
        "data": event.get("data"),
    }
