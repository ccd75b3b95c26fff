"""The local ``pre-commit`` guard (see :mod:`detente.hooks`).

Exit status 0 lets the commit proceed; 1 refuses it. Anything that keeps the check from
running (no server and no local store, an unknown claim) refuses too, and says why:
``--warn`` turns every refusal into a printed warning.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from detente.errors import DetenteError

if TYPE_CHECKING:
    from detente.client import Client

__all__ = ["committing_claim", "run", "staged_paths"]

CLAIM_ENV = "DETENTE_CLAIM"
_LIVE = ("active", "negotiating", "blocked", "suspended", "ready_for_review")


def _say(lines: list[str]) -> None:
    sys.stderr.write("".join(f"detente: {line}\n" for line in lines))


def staged_paths(worktree: Path) -> list[str]:
    """Paths the commit would change (added, modified, deleted; renames as both), read
    from the index git is committing: ``git commit -a``, ``git commit -- <paths>`` and
    ``git commit -i`` commit a temporary index named by ``GIT_INDEX_FILE``."""
    from detente.hooks.gitread import HookRepo

    return HookRepo(worktree).staged_paths()


def committing_claim(client: Client, repo: str, worktree: Path) -> str | None:
    """``$DETENTE_CLAIM``, else ``git config detente.claim``, else the one live claim
    whose branch is checked out here (None when there is none or several)."""
    from detente.hooks.gitread import HookRepo

    if os.environ.get(CLAIM_ENV):
        return os.environ[CLAIM_ENV]
    git = HookRepo(worktree).git
    configured = git.run("config", "--get", "detente.claim", check=False)
    if configured.ok and configured.stdout.strip():
        return configured.stdout.strip()
    branch = git.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False).stdout.strip()
    if not branch:
        return None
    claims = client.list_claims(repo=repo or None)["claims"]
    mine = [c for c in claims if c.get("branch") == branch and c["status"] in _LIVE]
    return str(mine[0]["id"]) if len(mine) == 1 else None


def run(*, warn: bool = False, worktree: Path | None = None) -> int:
    """Check the staged paths, and what the staged diff does to symbols (read from the
    index git is committing, see :func:`detente.hooks.symbol_edits.staged_edits`); print
    why a commit is refused.

    Args:
        warn: only print (always exit 0).
        worktree: the worktree (default: the current directory, where git runs hooks).

    Returns:
        0 to let the commit proceed, 1 to refuse it.
    """
    from detente.client import connect

    here = worktree or Path.cwd()
    refuse = 0 if warn else 1
    try:
        from detente.hooks.gitread import HookRepo
        from detente.hooks.symbol_edits import staged_edits

        paths = staged_paths(here)
        if not paths:
            return 0
        edits = staged_edits(HookRepo(here), paths)
        with connect(None, here) as client:
            repo = client.repo_name or ""
            claim_id = committing_claim(client, repo, here)
            result = client.pre_commit(repo, claim_id, paths, edits=edits)
    except DetenteError as exc:
        _say([f"cannot check this commit ({exc.code}: {exc.detail})", _verdict(warn)])
        return refuse
    if result["ok"]:
        return 0
    who = f"claim {claim_id}" if claim_id else "this commit (no claim of yours is checked out)"
    lines = [f"{who} may not commit:", *(f"  {r}" for r in result["reasons"])]
    held = sorted({f["path"] for f in result["findings"]})
    if held:
        lines.append(f"  unstage with: git restore --staged -- {' '.join(held)}")
    _say([*lines, _verdict(warn)])
    return refuse


def _verdict(warn: bool) -> str:
    return "warning only (--warn): committing anyway" if warn else "commit refused"
