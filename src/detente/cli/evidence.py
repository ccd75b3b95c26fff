"""What ``claim status`` reports beside the record: the evidence completion will require.

Read from the claim's worktree when it is on this machine (two git calls), else empty.
Kept apart from :mod:`detente.cli.workspace` (worktree creation, claim bodies) so that
the read agents run on every tool use imports only this.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from detente.vcs.repo import current_oid

__all__ = ["evidence", "local_worktree"]


def local_worktree(claim: Mapping[str, Any]) -> Path | None:
    """The claim's worktree directory if it exists on this machine as a git checkout
    (it holds ``.git``: a file in a linked worktree, a directory in the main one), else
    None: a plain directory recorded as the worktree is not the claim's work."""
    worktree = claim.get("worktree")
    if not worktree:
        return None
    path = Path(str(worktree))
    return path if path.is_dir() and (path / ".git").exists() else None


def no_worktree_reason(claim: Mapping[str, Any]) -> str:
    """Why :func:`local_worktree` found none, in words a user can act on."""
    who = f"claim {claim['id']}" if claim.get("id") else "the claim"
    recorded = claim.get("worktree")
    if not recorded:
        return f"{who} has no worktree (it was opened with --no-worktree)"
    return f"{who}'s worktree {recorded} is not a git checkout on this machine"


def evidence(claim: Mapping[str, Any]) -> dict[str, Any]:
    """The evidence completion will require, as far as it can be gathered locally now.

    Returns:
        ``{headCommit, changedFiles, tests[{name, status}], apiChanges, migrations,
        deployment, unresolvedRisks, memoryUpdates, worktreePresent, missing[]}``;
        ``missing`` names what is not there yet (no commit since base, tests not run).
    """
    worktree = local_worktree(claim)
    head = current_oid(worktree, "HEAD") if worktree else None
    changed: list[str] = []
    if worktree is not None:
        from detente.vcs.worktrees import changed_files

        changed = changed_files(worktree, str(claim["baseCommit"]))
    tests = [{"name": t, "status": "not_run"} for t in claim.get("testResponsibility", [])]
    missing: list[str] = []
    if worktree is None:
        missing.append(no_worktree_reason(claim))
    elif head == claim.get("baseCommit"):
        missing.append("no commit since the base commit")
    missing.extend(f"test result for {t['name']}" for t in tests)
    return {
        "headCommit": head,
        "changedFiles": changed,
        "tests": tests,
        "apiChanges": list(claim.get("expectedContractChanges", [])),
        "migrations": [],
        "deployment": claim.get("deploymentResponsibility"),
        "unresolvedRisks": [],
        "memoryUpdates": [m["path"] for m in claim.get("memoryImpacts", [])],
        "worktreePresent": worktree is not None,
        "missing": missing,
    }
