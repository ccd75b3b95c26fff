"""The local ``pre-commit`` guard (see :mod:`detente.hooks`).

Exit status 0 lets the commit proceed; 1 refuses it. A repository detente does not
coordinate (no server named or found, no store: :func:`detente.client.local_check.existing_store`)
is not checked: the guard exits 0 and creates nothing, so a hooks directory shared by
many repositories costs the others one Python start. Anything else that keeps the check
from running (an unreachable server, an unknown claim) refuses, and says why: ``--warn``
turns every refusal into a printed warning.

What the guard imports is kept small (it runs on every ``git commit``): no ``httpx``
(:mod:`detente.client.stdlib_http` carries the request), no pydantic (local mode calls the
service directly, :mod:`detente.client.local_check`), no ``rich`` or ``typer``; the
symbol index (tree-sitter) only when symbols matter to the commit.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from detente.errors import DetenteError

if TYPE_CHECKING:
    from detente.client import Client
    from detente.hooks.gitread import HookRepo
    from detente.operations.wire import CommitCheck

__all__ = ["committing_claim", "run", "staged_paths", "untouched"]

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


def _named_claim(repo: HookRepo) -> str | None:
    """``$DETENTE_CLAIM``, else ``git config detente.claim``."""
    if os.environ.get(CLAIM_ENV):
        return os.environ[CLAIM_ENV]
    return repo.config("detente.claim")


def _branch(repo: HookRepo) -> str | None:
    out = repo.git.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return out.stdout.strip() or None


def committing_claim(client: Client, repo: str, worktree: Path) -> str | None:
    """``$DETENTE_CLAIM``, else ``git config detente.claim``, else the one live claim
    whose branch is checked out here (None when there is none or several)."""
    from detente.hooks.gitread import HookRepo

    here = HookRepo(worktree)
    named = _named_claim(here)
    if named:
        return named
    branch = _branch(here)
    if not branch:
        return None
    claims = client.list_claims(repo=repo or None)["claims"]
    mine = [c for c in claims if c.get("branch") == branch and c["status"] in _LIVE]
    return str(mine[0]["id"]) if len(mine) == 1 else None


def untouched(repo: HookRepo) -> bool:
    """True when detente has nothing to say here: no server named (``$DETENTE_URL``) or
    listening on the default address, no store named (``$DETENTE_STORE``), and no
    default store under the common git directory. Reads, creates nothing."""
    from detente.client.connect import DEFAULT_URL, URL_ENV, listening

    if os.environ.get(URL_ENV) or os.environ.get("DETENTE_STORE"):
        return False
    seen = _common_dir_seen(repo.cwd)  # a stat or two instead of a git process
    if seen is not None and (seen / "detente" / "detente.db").is_file():
        return False  # (a wrong guess here only means the full check runs, and finds out)
    if (repo.common_dir() / "detente" / "detente.db").is_file():
        return False
    return not listening(DEFAULT_URL)


def _common_dir_seen(top: Path) -> Path | None:
    """The common git directory as the files at ``top`` (where git runs the hook) name
    it: ``top/.git`` when it is a directory; for a linked worktree's ``.git`` file
    (``gitdir: X``), ``X/commondir`` resolved against ``X``. None when git's own
    variables name the repository, or anything is unexpected."""
    if any(os.environ.get(v) for v in ("GIT_DIR", "GIT_COMMON_DIR")):
        return None
    dot_git = top / ".git"
    try:
        if dot_git.is_dir():
            return dot_git
        first = dot_git.read_text(encoding="utf-8").splitlines()[0]
        if not first.startswith("gitdir: "):
            return None
        private = (top / first.removeprefix("gitdir: ").strip()).resolve()
        common = (private / "commondir").read_text(encoding="utf-8").strip()
        return (private / common).resolve()
    except (OSError, UnicodeDecodeError, IndexError):
        return None


def run(*, warn: bool = False, worktree: Path | None = None) -> int:
    """Check the staged paths, and what the staged diff does to symbols (read from the
    index git is committing, see :func:`detente.hooks.symbol_edits.staged_edits`); print
    why a commit is refused.

    Args:
        warn: only print (always exit 0).
        worktree: the worktree (default: the current directory, where git runs hooks).

    Returns:
        0 to let the commit proceed (or when the repository has no detente), 1 to refuse.
    """
    from detente.hooks.gitread import HookRepo

    here = worktree or Path.cwd()
    refuse = 0 if warn else 1
    claim_id: str | None = None
    try:
        repo = HookRepo(here)
        if untouched(repo):
            return 0
        paths = repo.staged_paths()
        if not paths:
            return 0
        found = _check(repo, here, paths)
        if found is None:
            return 0  # no store: detente does not coordinate this repository
        claim_id, result = found
    except DetenteError as exc:
        _say([f"cannot check this commit ({exc.code}: {exc.detail})", _verdict(warn)])
        return refuse
    if result["ok"]:
        return 0
    who = (
        f"claim {claim_id} may not commit this:"
        if claim_id
        else "no claim is checked out here (to commit as one: DETENTE_CLAIM=clm_... git commit),"
        " and this commit touches what live claims hold:"
    )
    lines = [who, *(f"  {r}" for r in result["reasons"])]
    held = sorted({f["path"] for f in result["findings"]})
    if held:
        lines.append(f"  unstage with: git restore --staged -- {' '.join(held)}")
    _say([*lines, _verdict(warn)])
    return refuse


def _check(repo: HookRepo, here: Path, paths: list[str]) -> tuple[str | None, CommitCheck] | None:
    """``(committing claim, the answer)`` from the server or the local store; None when
    this repository has neither."""
    from detente.client.connect import connect_server
    from detente.hooks.symbol_edits import staged_edits

    client, info = connect_server(here)
    if client is None:
        from detente.client.local_check import check_commit_locally

        named = _named_claim(repo)

        def read_edits() -> Mapping[str, tuple[tuple[str, ...], bool]] | None:
            found = staged_edits(repo, paths)
            return None if found is None else _edit_map(found)

        local = check_commit_locally(
            info,
            named,
            paths,
            branch=None if named else _branch(repo),
            read_edits=read_edits,
        )
        return None if local is None else (local["claimId"], local)
    with client:
        edits = staged_edits(repo, paths)
        name = client.repo_name or ""
        claim_id = committing_claim(client, name, here)
        return claim_id, client.pre_commit(name, claim_id, paths, edits=edits)


def _edit_map(edits: list[dict[str, Any]]) -> dict[str, tuple[tuple[str, ...], bool]]:
    return {str(e["path"]): (tuple(e["symbols"]), bool(e["outside"])) for e in edits}


def _verdict(warn: bool) -> str:
    return "warning only (--warn): committing anyway" if warn else "commit refused"
