"""Wire records (API.md shapes) for the dashboard's pure tests."""

from __future__ import annotations

from typing import Any


def claim(cid: str, paths: list[str], status: str = "active", **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": cid,
        "repo": "project",
        "objective": f"work on {' '.join(paths)}",
        "status": status,
        "revision": 2,
        "agent": {"id": cid, "name": f"agent-{cid}", "sessionId": None},
        "baseCommit": "a" * 40,
        "branch": None,
        "worktree": None,
        "paths": paths,
        "pendingPaths": [],
        "modules": [],
        "symbols": [],
        "expectedContractChanges": [],
        "testResponsibility": [],
        "deploymentResponsibility": None,
        "memoryImpacts": [],
        "lease": {
            "id": f"lse_{cid}",
            "revision": 1,
            "ttlSeconds": 600,
            "expiresAt": "2026-11-30T12:10:00Z",
        },
        "fencingToken": 1,
        "meetingIds": [],
        "statusReason": None,
        "evidence": None,
        "integration": None,
        "createdAt": "2026-11-30T12:00:00Z",
        "updatedAt": "2026-11-30T12:00:00Z",
    }
    record.update(extra)
    return record
