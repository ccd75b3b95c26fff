"""What a claim's work looks like in git right now: branch head, commits, worktree, rescue.

Read-only: used to show an expired or abandoned claim's work in its record, so the next
agent can see what is there before taking it over. One ``git for-each-ref`` reads both
refs; the commit count between two OIDs never changes, so it is cached per process by
``(repository, base, head)``: a repeated read of an unchanged claim costs one git call.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from detente.errors import DetenteError
from detente.vcs.git import Git
from detente.vcs.rescue import RESCUE_PREFIX

__all__ = ["work_state"]

#: Commit counts remembered (``(repo, base, head) -> count``), least recently used first.
_COUNTS: OrderedDict[tuple[str, str, str], int] = OrderedDict()
_COUNTS_LIMIT = 4096
_LOCK = threading.Lock()


def work_state(
    repo: Path, *, claim_id: str, branch: str | None, base_commit: str, worktree: str | None
) -> dict[str, Any]:
    """``{branchHead, commitsSinceBase, worktree {path, exists}, rescue {ref, oid}}``.

    Fields that git cannot answer (a deleted branch, an unknown base) are None; this never
    raises for a missing branch or worktree. One git call, two when the branch head is
    new to this process.
    """
    state: dict[str, Any] = {"branchHead": None, "commitsSinceBase": None, "worktree": None}
    rescue_ref = RESCUE_PREFIX + claim_id
    branch_ref = f"refs/heads/{branch}" if branch else None
    try:
        git = Git(repo)
        oids = _ref_oids(git, [r for r in (branch_ref, rescue_ref) if r])
        head = oids.get(branch_ref) if branch_ref else None
        state["branchHead"] = head
        if head:
            state["commitsSinceBase"] = _commits_between(git, repo, base_commit, head)
        rescue = oids.get(rescue_ref)
        state["rescue"] = {"ref": rescue_ref, "oid": rescue} if rescue else None
    except DetenteError:
        pass
    if worktree:
        state["worktree"] = {"path": worktree, "exists": Path(worktree).is_dir()}
    return state


def _ref_oids(git: Git, refs: list[str]) -> dict[str, str]:
    """``ref -> OID`` of those of ``refs`` that exist (full names; tags not peeled)."""
    listed = git.run("for-each-ref", "--format=%(refname) %(objectname)", *refs, check=False)
    if not listed.ok:
        raise listed.error()
    wanted = set(refs)
    found: dict[str, str] = {}
    for line in listed.stdout.splitlines():
        name, _, oid = line.rpartition(" ")
        if name in wanted:  # a pattern also lists refs below it (refs/heads/x/y)
            found[name] = oid
    return found


def _commits_between(git: Git, repo: Path, base: str, head: str) -> int | None:
    """``git rev-list --count base..head``, cached when both are full OIDs (immutable)."""
    key = (str(repo), base, head)
    cacheable = _is_oid(base) and _is_oid(head)
    with _LOCK:
        if cacheable and key in _COUNTS:
            _COUNTS.move_to_end(key)
            return _COUNTS[key]
    count = git.run("rev-list", "--count", f"{base}..{head}", check=False)
    if count.returncode != 0:
        return None
    value = int(count.stdout.strip() or 0)
    if not cacheable:
        return value
    with _LOCK:
        _COUNTS[key] = value
        if len(_COUNTS) > _COUNTS_LIMIT:
            _COUNTS.popitem(last=False)
    return value


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
