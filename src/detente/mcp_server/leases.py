"""Advisory file leases of one session: replacing older ones, releasing paths.

A session's advisory claims are asked of the detente (the session's holding claims) and
changed with the revision just read; after a race (the revision moved, the lease lapsed)
the claim is re-read once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from detente.domain.overlap.carveouts import is_covered
from detente.domain.overlap.globs import matches
from detente.domain.overlap.paths import has_wildcard, normalize_pattern
from detente.errors import DetenteError
from detente.mcp_server.shapes import holding, prune
from detente.mcp_server.toolkit import ToolContext
from detente.operations import wire

__all__ = ["release", "replace_older"]


def _mine(ctx: ToolContext, repo: str, session_id: str) -> list[wire.Claim]:
    """This session's advisory claims that still hold files."""
    held = ctx.client.session_claims(session_id, repo=repo)["claims"]
    return [c for c in held if c.get("advisory")]


def replace_older(
    ctx: ToolContext, repo: str, session_id: str, new: Mapping[str, Any]
) -> list[str]:
    """Abandon the session's older advisory claims whose paths the new one all covers."""
    covered = set(new["paths"])
    replaced: list[str] = []
    for claim in _mine(ctx, repo, session_id):
        if claim["id"] == new["id"] or not set(claim["paths"]) <= covered:
            continue
        try:
            ctx.client.abandon(
                claim["id"],
                expected_claim_revision=claim["revision"],
                reason=f"replaced by {new['id']}",
            )
        except DetenteError:
            continue  # it lapsed or changed meanwhile: it no longer needs replacing
        replaced.append(claim["id"])
    return replaced


def _released_by(claimed: str, asked: list[str]) -> bool:
    """Whether a claimed pattern is released by the asked patterns: named as claimed, or
    covered by them (every path it matches is matched by one of them: ``gen/**`` releases
    ``gen/h*.py`` as it releases ``gen/a.py``)."""
    if claimed in asked:
        return True
    wild = [p for p in asked if has_wildcard(p)]
    if not has_wildcard(claimed):
        return any(matches(p, claimed) for p in wild)
    return bool(wild) and is_covered(claimed, wild)


def release(ctx: ToolContext, session_id: str, paths: list[str] | None) -> dict[str, Any]:
    repo = ctx.repo_for(session_id)
    folded = ctx.case_insensitive(repo)
    asked = (
        None
        if paths is None
        else [
            normalize_pattern(p, case_insensitive=folded, field=f"paths[{i}]")
            for i, p in enumerate(paths)
        ]
    )
    released: list[str] = []
    narrowed: list[str] = []
    still: list[str] = []
    for claim in _mine(ctx, repo, session_id):
        held = list(claim["paths"]) + list(claim.get("pendingPaths", []))
        drop = held if asked is None else [p for p in held if _released_by(p, asked)]
        if not drop:
            still += held
            continue
        if len(drop) == len(held):
            _settle(ctx, claim, None)
            released.append(claim["id"])
        else:
            _settle(ctx, claim, drop)
            narrowed.append(claim["id"])
            still += [p for p in held if p not in drop]
    return prune(
        {
            "released": released,
            "narrowed": narrowed,
            "stillHeld": sorted(set(still)),
            "next": "done" if released or narrowed else _nothing_matched(asked or [], still),
        }
    )


def _nothing_matched(asked: list[str], still: list[str]) -> str:
    """Why nothing was released: a path inside a claimed glob does not cut the glob."""
    inside = sorted({held for held in still for p in asked if _released_by(p, [held])})
    if inside:
        return (
            "nothing of yours matched these paths: release takes whole claimed patterns, "
            f"and {', '.join(inside)} covers what you named; release it (paths="
            f"{inside!r}) and claim_files the narrower paths you still need"
        )
    return "nothing of yours matched these paths"


def _settle(ctx: ToolContext, claim: wire.Claim, drop: list[str] | None) -> None:
    """Abandon ``claim`` (``drop`` None) or remove ``drop`` from it; after a race (its
    revision moved, its lease lapsed) re-read it once and retry if it still holds."""
    for attempt in (1, 2):
        revision = claim["revision"]
        try:
            if drop is None:
                ctx.client.abandon(
                    claim["id"],
                    expected_claim_revision=revision,
                    reason="released by release_files",
                )
            else:
                ctx.client.scope_change(
                    claim["id"],
                    expected_claim_revision=revision,
                    remove_paths=drop,
                    reason="release_files",
                )
            return
        except DetenteError:
            if attempt == 2:
                raise
            claim = ctx.client.get_claim(claim["id"])["claim"]
            if not holding(claim):
                return
