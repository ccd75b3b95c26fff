"""The server-side ``pre-receive`` check and ``post-receive`` report (see :mod:`detente.hooks`).

git runs them in the shared repository with one line ``<old> <new> <ref>`` per updated
ref on stdin; ``pre-receive`` sees the pushed objects only through the quarantine
variables, which every git call of a hook keeps (:mod:`detente.hooks.gitread`). The check
itself is :func:`detente.hooks.server_hooks.pre_receive`. Exit status 0 accepts the push.

``post-receive`` runs after the refs moved: it tells the server which claims the landed
commits name, so ``ready_for_review`` claims become ``integrated``. It cannot undo the
push; when the server is unreachable it says so (the claims stay ``ready_for_review``).
"""

from __future__ import annotations

from pathlib import Path

from detente.errors import DetenteError
from detente.hooks.gitread import HookRepo
from detente.hooks.refcheck import ServerSide, parse_updates, say

__all__ = ["run", "run_post"]


def run(stdin: str, repo: Path | None = None) -> int:
    """Check every protected ref update on ``stdin``.

    Args:
        stdin: the hook's input, ``<old> <new> <ref>`` lines.
        repo: the bare repository (default: the current directory).

    Returns:
        0 to accept the push, 1 to refuse it (every reason printed, prefixed ``detente:``).
    """
    from detente.hooks.server_hooks import pre_receive

    return pre_receive(stdin, HookRepo(repo))


def run_post(stdin: str, repo: Path | None = None) -> int:
    """Report every protected ref update on ``stdin`` to the server (always returns 0)."""
    from detente.hooks.checked import Checked
    from detente.vcs.refs import ZERO_OID

    here = HookRepo(repo)
    Checked(here).forget()
    cfg = ServerSide.read(here)
    protected = set(cfg.protected)
    mine = [u for u in parse_updates(stdin) if u.ref in protected and u.new != ZERO_OID]
    if not mine or not cfg.url:
        return 0
    from detente.client import connect

    try:
        with connect(cfg.url, None) as client:
            for u in mine:
                # After the push a new ref's commits are all reachable: report its tip's.
                landed = (
                    [here.commit(u.new)] if u.old == ZERO_OID else here.added_commits(u.old, u.new)
                )
                ids = [c for commit in landed for c in commit.claim_ids]
                done = client.post_receive(
                    {
                        "repo": cfg.name,
                        "ref": u.ref,
                        "oldOid": u.old,
                        "newOid": u.new,
                        "claimIds": ids,
                    }
                )
                for claim_id in done["integrated"]:
                    say([f"{u.ref}: claim {claim_id} integrated"])
    except DetenteError as exc:
        say([f"could not report the push to {cfg.url} ({exc.code}: {exc.detail})"])
    return 0
