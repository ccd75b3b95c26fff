"""What a claim's work looks like in git right now: branch head, commits, worktree, rescue.

Read-only: used to show an expired or abandoned claim's work in its record, so the next
agent can see what is there before taking it over.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from detente.errors import DetenteError
from detente.vcs.git import Git
from detente.vcs.repo import current_oid
from detente.vcs.rescue import RESCUE_PREFIX


def work_state(
    repo: Path, *, claim_id: str, branch: str | None, base_commit: str, worktree: str | None
) -> dict[str, Any]:
    """``{branchHead, commitsSinceBase, worktree {path, exists}, rescue {ref, oid}}``.

    Fields that git cannot answer (a deleted branch, an unknown base) are None; this never
    raises for a missing branch or worktree.
    """
    state: dict[str, Any] = {"branchHead": None, "commitsSinceBase": None, "worktree": None}
    try:
        if branch:
            head = current_oid(repo, f"refs/heads/{branch}")
            state["branchHead"] = head
            if head:
                count = Git(repo).run("rev-list", "--count", f"{base_commit}..{head}", check=False)
                if count.returncode == 0:
                    state["commitsSinceBase"] = int(count.stdout.strip() or 0)
        rescue = current_oid(repo, RESCUE_PREFIX + claim_id)
        state["rescue"] = {"ref": RESCUE_PREFIX + claim_id, "oid": rescue} if rescue else None
    except DetenteError:
        pass
    if worktree:
        state["worktree"] = {"path": worktree, "exists": Path(worktree).is_dir()}
    return state
