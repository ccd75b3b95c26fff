"""Example request bodies for ``/openapi.json``: the requests of the design document
(DESIGN.md's claim of "idempotent retries to settlement webhooks") and of API.md.

They are the ``examples`` of the body models (:mod:`detente.operations.bodies`); short
commit ids stand in for real ones (the server resolves a short ``baseCommit``).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "AGENT",
    "CLAIM",
    "COMPLETE",
    "OBJECTIVE_CHANGE",
    "RENEW",
    "SCOPE_CHANGE",
    "STATUS_CHANGE",
    "TAKEOVER",
]

#: ``POST /v1/claims``: the design document's claim.
CLAIM: Final[dict[str, Any]] = {
    "repo": "demo",
    "objective": "Add idempotent retries to settlement webhooks",
    "agent": {"id": "codex-7", "name": "codex", "sessionId": "sess-42"},
    "baseCommit": "4f2d6b1",
    "paths": ["src/settlement/**", "tests/settlement/**"],
    "modules": ["src/settlement"],
    "symbols": ["src/settlement/retry.py::deliver_with_retry"],
    "expectedContractChanges": [
        {
            "type": "http",
            "area": "POST /v1/settlements/{id}/webhooks",
            "change": "adds an Idempotency-Key header",
        },
        {"type": "db", "area": "settlement_attempts", "change": "adds a retry_count column"},
    ],
    "testResponsibility": {
        "unit": ["tests/settlement/test_retry.py"],
        "integration": ["tests/settlement/test_webhook_delivery.py"],
        "migration": ["tests/migrations/test_0042_retry_count.py"],
    },
    "deploymentResponsibility": "staging",
    "leaseTtlSeconds": 900,
    "memoryImpacts": [
        {"path": "memory/current-risks.md", "mode": "append_only"},
        {"path": "AGENTS.md", "mode": "section", "sections": ["settlement"]},
    ],
}

#: ``POST /v1/claims/{id}/takeover``: continue an expired claim's work.
TAKEOVER: Final[dict[str, Any]] = {
    "repo": "demo",
    "objective": "Finish the settlement webhook retries",
    "agent": {"id": "claude-2", "name": "claude", "sessionId": "sess-77"},
    "paths": ["src/settlement/**"],
    "takeoverOf": {
        "claimId": "clm_01J9Z6R4T8",
        "expectedClaimRevision": 7,
        "pieces": [{"target": "src/settlement/**", "decision": "continue"}],
    },
}

#: ``POST /v1/claims/{id}/renew``.
RENEW: Final[dict[str, Any]] = {
    "expectedLeaseRevision": 3,
    "expectedClaimRevision": 7,
    "ttlSeconds": 900,
}

#: ``POST /v1/claims/{id}/objective``.
OBJECTIVE_CHANGE: Final[dict[str, Any]] = {
    "expectedClaimRevision": 7,
    "objective": "Add idempotent retries and a dead-letter queue to settlement webhooks",
    "reason": "the dead-letter queue turned out to be part of the same change",
}

#: ``POST /v1/claims/{id}/scope-change``.
SCOPE_CHANGE: Final[dict[str, Any]] = {
    "expectedClaimRevision": 7,
    "addPaths": ["src/settlement/schema.sql"],
    "addExpectedContractChanges": [
        {"type": "db", "area": "settlement_attempts", "change": "adds an index"}
    ],
    "reason": "the retry count needs an index",
}

#: ``POST /v1/claims/{id}/suspend`` and ``resume``.
STATUS_CHANGE: Final[dict[str, Any]] = {"expectedClaimRevision": 7, "reason": "waiting on review"}

#: ``POST /v1/claims/{id}/complete``: the design document's evidence.
COMPLETE: Final[dict[str, Any]] = {
    "expectedClaimRevision": 7,
    "expectedBaseRef": {"ref": "refs/heads/main", "oid": "4f2d6b1"},
    "evidence": {
        "headCommit": "9c1e0aa",
        "changedFiles": ["src/settlement/retry.py"],
        "tests": [{"name": "tests/settlement/test_retry.py", "status": "passed", "exitCode": 0}],
        "apiChanges": [
            {
                "type": "http",
                "area": "POST /v1/settlements/{id}/webhooks",
                "change": "adds an Idempotency-Key header",
            }
        ],
        "migrations": [],
        "deployment": {"environment": "staging", "status": "pending"},
        "unresolvedRisks": ["retries of webhooks already in flight are not deduplicated"],
        "memoryUpdates": [],
    },
}

#: ``POST /v1/agents``: a session registers (or renews) itself.
AGENT: Final[dict[str, Any]] = {
    "sessionId": "sess-77",
    "agentName": "claude",
    "branch": "agent/claude-settlement",
    "worktree": "/srv/agents/claude-settlement",
    "intent": "Finish the settlement webhook retries",
    "ttlSeconds": 900,
}
