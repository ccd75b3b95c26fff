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
    "kept",
    "meeting_brief",
    "overlap_brief",
    "prune",
    "view_parts",
]

_HOLDING = frozenset(s.value for s in HOLDING_STATUSES)


def prune(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without ``None`` values, empty lists and empty dicts (order kept)."""
    return {k: v for k, v in data.items() if v is not None and v != [] and v != {}}


def kept(record: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """``{key: record[key]}`` for each of ``keys`` in order (None where missing)."""
    return {key: record.get(key) for key in keys}


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
            **kept(claim, "status", "revision"),
            "leaseRevision": lease.get("revision"),
            "expiresAt": lease.get("expiresAt"),
            "fencingToken": claim.get("fencingToken"),
            "sessionId": agent.get("sessionId"),
            "advisory": claim.get("advisory") or None,
            **kept(claim, "paths", "pendingPaths", "modules", "symbols", "meetingIds"),
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
            **kept(claim, "statusReason", "baseCommit", "branch", "worktree", "abandonment"),
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
            **kept(overlap, "severity", "kind"),
            "witness": targets[0].get("witness"),
            "reason": overlap.get("reason"),
        }
    )


def agent_brief(agent: Mapping[str, Any]) -> dict[str, Any]:
    """``{sessionId, agentName, status, intent, branch, worktree, expiresAt, lastSeen,
    claimIds}`` (``lastSeen``: the last registration, i.e. heartbeat)."""
    return prune(
        {
            **kept(agent, "sessionId", "agentName", "status"),
            "intent": agent.get("intent") or None,
            **kept(agent, "branch", "worktree", "expiresAt"),
            "lastSeen": agent.get("updatedAt"),
            "claimIds": agent.get("claimIds"),
        }
    )


def meeting_brief(meeting: Mapping[str, Any]) -> dict[str, Any]:
    """``{meetingId, status, revision, participants, contested, proposals, deadline, ...}``."""
    return prune(
        {
            "meetingId": meeting.get("id"),
            **kept(meeting, "status", "revision", "participants"),
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
            **kept(meeting, "resolution", "outcome", "dissolution", "deadline"),
            "options": meeting.get("options") if meeting.get("status") == "open" else None,
        }
    )


def event_brief(event: Mapping[str, Any]) -> dict[str, Any]:
    """``{seq, type, subject, at, data}`` (hashes left out: verify with the audit API)."""
    return kept(event, "seq", "type", "subject", "at", "data")


def view_parts(view: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of an HTTP claim view (``{claim, overlaps, meeting, meetings, work,
    semanticOverlaps, checks}``) beside the claim itself, in tool shape: ``{meetingId,
    overlaps, semanticOverlaps, meetings, work, checks}``. Every tool returning a claim
    view uses it, so none drops a part the HTTP answer carries."""
    meeting = view.get("meeting")
    return {
        "meetingId": meeting.get("id") if meeting else None,
        "overlaps": [overlap_brief(o) for o in view.get("overlaps") or []],
        "semanticOverlaps": [overlap_brief(o) for o in view.get("semanticOverlaps") or []],
        "meetings": [meeting_brief(m) for m in view.get("meetings") or []],
        "work": view.get("work"),
        "checks": view.get("checks"),
    }
