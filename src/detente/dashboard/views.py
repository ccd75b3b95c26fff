"""Panel view models: the snapshot's records arranged the way each panel shows them.

Pure functions over wire records (API.md shapes) and the read time; no IO. Templates
render what these return and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from detente.clock import parse_time
from detente.domain.claims.model import HOLDING_STATUSES
from detente.domain.claims.wire import contract_text, tests_text

__all__ = [
    "FINISHED",
    "LEASED",
    "ClaimGroup",
    "agents_view",
    "claim_groups",
    "deployments_view",
    "evidence_needed",
    "meetings_view",
    "memory_at_risk",
    "top_directory",
]

Wire = dict[str, Any]

#: Statuses whose lease still runs (a timer counts down).
LEASED = frozenset(
    {"announced", "negotiating", "active", "blocked", "suspended", "ready_for_review"}
)
#: Statuses of claims that are done with; listed apart, most recent first.
FINISHED = frozenset({"integrated", "completed", "abandoned", "taken_over"})
#: How many finished claims the claims panel lists.
FINISHED_SHOWN = 10


@dataclass
class ClaimGroup:
    """Claims under one heading (a top-level directory or a CODEOWNERS owner set)."""

    title: str
    claims: list[Wire] = field(default_factory=list)


def top_directory(pattern: str) -> str:
    """The top-level directory a path pattern lives in (``/`` for the repository root).

    >>> top_directory("src/app/**"), top_directory("README.md"), top_directory("**/*.md")
    ('src/', '/', '/')
    """
    head, sep, _ = pattern.partition("/")
    if not sep or any(ch in head for ch in "*?["):
        return "/"
    return head + "/"


def claim_groups(
    claims: Iterable[Wire], owners: dict[str, list[str]], by: str
) -> tuple[list[ClaimGroup], list[Wire]]:
    """Live claims grouped by subsystem, and the latest finished claims.

    Args:
        claims: claim records.
        owners: claim id -> CODEOWNERS owners of its paths.
        by: ``dir`` (the top-level directory of the claim's first path) or ``owner``
            (its CODEOWNERS owners; ``no owner`` when CODEOWNERS names none).

    Returns:
        ``(groups sorted by title, finished claims newest first)``; a claim is listed once.
    """
    groups: dict[str, ClaimGroup] = {}
    finished: list[Wire] = []
    for claim in claims:
        if claim["status"] in FINISHED:
            finished.append(claim)
            continue
        if by == "owner":
            title = ", ".join(owners.get(claim["id"], [])) or "no owner"
        else:
            paths = claim["paths"] or claim.get("pendingPaths") or []
            title = top_directory(paths[0]) if paths else "no paths"
        groups.setdefault(title, ClaimGroup(title)).claims.append(claim)
    finished.sort(key=lambda c: c["updatedAt"], reverse=True)
    return sorted(groups.values(), key=lambda g: g.title), finished[:FINISHED_SHOWN]


def evidence_needed(claim: Wire) -> list[str]:
    """What a live claim still has to show before completion (API.md ``evidence``)."""
    if claim["status"] in FINISHED or claim.get("evidence"):
        return []
    needed = ["head commit", "changed files"]
    tests = tests_text(claim.get("testResponsibility") or [])
    needed.append(f"tests: {tests}" if tests else "test results")
    contracts = [contract_text(c) for c in claim.get("expectedContractChanges") or []]
    if contracts:
        needed.append(f"API changes: {', '.join(contracts)}")
    impacts = claim.get("memoryImpacts") or []
    if impacts:
        needed.append("memory updates: " + ", ".join(i["path"] for i in impacts))
    if claim.get("deploymentResponsibility"):
        needed.append("deployment")
    return needed


def _witnesses(meeting: Wire, overlaps: dict[str, list[Wire]]) -> dict[str, list[str]]:
    """Contested target -> example paths both sides match (from the live overlap reports)."""
    out: dict[str, list[str]] = {}
    for contested in meeting["contestedTargets"]:
        target = contested["target"]
        seen: list[str] = []
        for claim_id in contested["claimIds"]:
            for overlap in overlaps.get(claim_id, []):
                if overlap["claimId"] not in contested["claimIds"]:
                    continue
                for t in overlap["targets"]:
                    if (
                        target in (t["mine"], t["theirs"])
                        and t["witness"]
                        and (t["witness"] not in seen)
                    ):
                        seen.append(t["witness"])
        out[target] = seen
    return out


_HOLDING = frozenset(s.value for s in HOLDING_STATUSES)


def meetings_view(
    meetings: Iterable[Wire], claims: dict[str, Wire], overlaps: dict[str, list[Wire]]
) -> tuple[list[Wire], list[Wire]]:
    """Open and escalated meetings (with witnesses and participants' records), and the
    latest resolved ones.

    Returns:
        ``(live, resolved)``; each item is ``{meeting, witnesses, participants[],
        parties[]}`` (``parties``: the participants that still hold, the only claims the
        resolve form offers).
    """
    live: list[Wire] = []
    resolved: list[Wire] = []
    for meeting in meetings:
        item = {
            "meeting": meeting,
            "witnesses": _witnesses(meeting, overlaps),
            "participants": [claims[c] for c in meeting["participants"] if c in claims],
            # The resolve form names only claims that still hold: the server refuses a
            # resolution naming any other (409 invalid_transition).
            "parties": [
                claims[c]
                for c in meeting["participants"]
                if c in claims and claims[c]["status"] in _HOLDING
            ],
        }
        (resolved if meeting["status"] == "resolved" else live).append(item)
    resolved.sort(key=lambda i: i["meeting"]["updatedAt"], reverse=True)
    return live, resolved[:FINISHED_SHOWN]


def memory_at_risk(documents: Iterable[Wire], claims: dict[str, Wire]) -> list[Wire]:
    """Memory documents needing a human: ``[{path, repo, risks[{kind, text}]}]``.

    Risks: a reconciliation still open (a user's edit inside a generated region), a file
    whose bytes on disk differ from the record, a section a live claim intends to change
    whose last writer is another claim, and patch artifacts kept from refused writes.
    """
    out: list[Wire] = []
    for doc in documents:
        risks: list[Wire] = []
        for rec in doc.get("reconciliations", []):
            if rec.get("status") == "open":
                risks.append(
                    {
                        "kind": "user edit",
                        "text": f"region {rec['regionKey']} edited by hand "
                        f"(reconciliation {rec['id']})",
                    }
                )
        on_disk = doc.get("onDisk")
        # A document absent from the branch (registered before its first write) is no
        # drift: the next write creates it.
        if on_disk is not None and not on_disk.get("inSync", True) and on_disk.get("fileHash"):
            risks.append(
                {
                    "kind": "drift",
                    "text": "the branch's copy differs from the record (a person's edit: "
                    "adopted at the next write)",
                }
            )
        for claim in claims.values():
            if claim["status"] not in LEASED:
                continue
            for impact in claim.get("memoryImpacts", []):
                if impact["path"] != doc["path"]:
                    continue
                for section in doc.get("sections", []):
                    wanted = impact.get("sections") or []
                    writer = section.get("lastWriterClaimId")
                    if (
                        (not wanted or section["key"] in wanted)
                        and writer
                        and (writer != claim["id"])
                    ):
                        risks.append(
                            {
                                "kind": "moved",
                                "text": f"#{section['key']} (revision "
                                f"{section['revision']}) last written by {writer}, claimed by "
                                f"{claim['id']}",
                            }
                        )
        for art in doc.get("artifacts", []):
            risks.append(
                {
                    "kind": "kept edit",
                    "text": f"artifact {art['id']} from {art['claimId']} "
                    f"(#{art['sectionKey']}): {art['reason']}",
                }
            )
        if risks:
            out.append({"path": doc["path"], "repo": doc["repo"], "risks": risks})
    return out


def deployments_view(deployments: Iterable[Wire], claims: Iterable[Wire]) -> list[Wire]:
    """Per environment: current commit, pending migrations, risks against the policy, and
    the integrated or completed claims no deployment of it has named yet."""
    finished = [c for c in claims if c["status"] in ("integrated", "completed")]
    out: list[Wire] = []
    for dep in deployments:
        env = dep.get("environment") or {}
        current = dep.get("deployment") or {}
        policy = dep.get("policy") or {}
        risks = list(current.get("unresolvedRisks") or [])
        limit = policy.get("maxUnresolvedRisks")
        deployed = {h.get("claimId") for h in dep.get("history", [])}
        commit = current.get("commitOid")
        out.append(
            {
                "name": env.get("environment") or current.get("environment"),
                "repo": env.get("repo") or current.get("repo"),
                "commit": commit,
                "at": current.get("at"),
                "pendingMigrations": [
                    m for m in current.get("migrations") or [] if m.get("status") != "applied"
                ],
                "risks": risks,
                "riskLimit": limit,
                "overRiskLimit": limit is not None and len(risks) > limit,
                "undeployed": [
                    c
                    for c in finished
                    if c["repo"] == (env.get("repo") or current.get("repo"))
                    and c["id"] not in deployed
                    and (c.get("integration") or {}).get("newOid") != commit
                ],
            }
        )
    return out


def agents_view(agents: Iterable[Wire], claims: dict[str, Wire], now: str) -> list[Wire]:
    """Sessions with heartbeat age (seconds since their last renewal) and their claims."""
    at = parse_time(now)
    out: list[Wire] = []
    for agent in agents:
        seen: datetime = parse_time(agent["updatedAt"])
        out.append(
            {
                **agent,
                "heartbeatAge": max(0, int((at - seen).total_seconds())),
                "claims": [claims[c] for c in agent.get("claimIds", []) if c in claims],
            }
        )
    return sorted(out, key=lambda a: (a.get("status") != "active", a["agentName"]))
