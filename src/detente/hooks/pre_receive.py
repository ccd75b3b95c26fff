"""The server-side ``pre-receive`` check and ``post-receive`` report (see :mod:`detente.hooks`).

git runs it in the bare repository with the pushed objects quarantined (visible through
``GIT_OBJECT_DIRECTORY``, which :class:`~detente.vcs.git.Git` passes on) and one line
``<old> <new> <ref>`` per updated ref on stdin. Unprotected refs pass untouched; every
protected one is checked by the server. Exit status 0 accepts the whole push.

``post-receive`` runs after the refs moved: it tells the server which claims the landed
commits name, so ``ready_for_review`` claims become ``integrated``. It cannot undo the
push; when the server is unreachable it says so (the claims stay ``ready_for_review``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from detente.errors import DetenteError, EvidenceRejected

__all__ = ["protected_refs", "run", "run_post"]


def _say(lines: list[str]) -> None:
    sys.stderr.write("".join(f"detente: {line}\n" for line in lines))


def _config(repo: Path, key: str, *, all_values: bool = False) -> list[str]:
    from detente.vcs.git import Git

    flag = "--get-all" if all_values else "--get"
    out = Git(repo).run("config", flag, key, check=False)
    return [v.strip() for v in out.stdout.splitlines() if v.strip()] if out.ok else []


def protected_refs(repo: Path) -> list[str]:
    """``detente.protectedRef`` values, else the ref HEAD names (``refs/heads/main``)."""
    from detente.vcs.git import Git

    configured = _config(repo, "detente.protectedRef", all_values=True)
    if configured:
        return configured
    head = Git(repo).run("symbolic-ref", "--quiet", "HEAD", check=False).stdout.strip()
    return [head or "refs/heads/main"]


def _update(repo: Path, name: str, old: str, new: str, ref: str) -> dict[str, Any]:
    from detente.vcs.refs import ZERO_OID, claim_trailers, commit_files, new_commits
    from detente.vcs.repo import is_ancestor

    commits = [
        {"oid": oid, "claimIds": claim_trailers(repo, oid), "files": commit_files(repo, oid)}
        for oid in new_commits(repo, old, new)
    ]
    forward = old == ZERO_OID or is_ancestor(repo, old, new)
    return {
        "repo": name,
        "ref": ref,
        "oldOid": old,
        "newOid": new,
        "fastForward": forward,
        "commits": commits,
    }


def run(stdin: str, repo: Path | None = None) -> int:
    """Check every protected ref update on ``stdin``.

    Args:
        stdin: the hook's input, ``<old> <new> <ref>`` lines.
        repo: the bare repository (default: the current directory).

    Returns:
        0 to accept the push, 1 to refuse it (every reason printed, prefixed ``detente:``).
    """
    from detente.vcs.refs import ZERO_OID

    here = repo or Path.cwd()
    protected = set(protected_refs(here))
    updates = [line.split() for line in stdin.splitlines() if line.strip()]
    mine = [(old, new, ref) for old, new, ref in updates if ref in protected]
    if not mine:
        return 0
    refs = ", ".join(ref for _, _, ref in mine)
    deleted = [ref for _, new, ref in mine if new == ZERO_OID]
    if deleted:
        _say([f"refusing to delete protected ref {', '.join(deleted)}"])
        return 1
    url, name = _server(here)
    if not url:
        _say([f"no detente server configured (git config detente.url): refusing {refs}"])
        return 1
    from detente.client import ServerUnavailable, connect

    failures: list[str] = []
    try:
        bodies = [_update(here, name, old, new, ref) for old, new, ref in mine]
        with connect(url, None) as client:
            for body in bodies:
                try:
                    client.pre_receive(body)
                except EvidenceRejected as exc:
                    failures += exc.failures
    except ServerUnavailable as exc:
        _say(
            [
                f"the detente server at {url} is unreachable ({exc.detail})",
                f"failing closed: refusing the update of protected ref {refs}",
            ]
        )
        return 1
    except DetenteError as exc:
        _say([f"cannot check the push ({exc.code}: {exc.detail})", f"refusing {refs}"])
        return 1
    if failures:
        _say([f"push to {refs} refused:", *(f"  {f}" for f in failures)])
        _say(["protected refs move only by detente integrations (detente claim complete)"])
        return 1
    return 0


def _server(here: Path) -> tuple[str | None, str]:
    url = os.environ.get("DETENTE_URL") or next(iter(_config(here, "detente.url")), None)
    name = next(iter(_config(here, "detente.repo")), None) or here.name.removesuffix(".git")
    return url, name


def run_post(stdin: str, repo: Path | None = None) -> int:
    """Report every protected ref update on ``stdin`` to the server (always returns 0)."""
    from detente.vcs.refs import ZERO_OID, claim_trailers, new_commits

    here = repo or Path.cwd()
    protected = set(protected_refs(here))
    updates = [line.split() for line in stdin.splitlines() if line.strip()]
    mine = [(o, n, r) for o, n, r in updates if r in protected and n != ZERO_OID]
    url, name = _server(here)
    if not mine or not url:
        return 0
    from detente.client import connect

    try:
        with connect(url, None) as client:
            for old, new, ref in mine:
                commits = [new] if old == ZERO_OID else new_commits(here, old, new)
                ids = [c for oid in commits for c in claim_trailers(here, oid)]
                done = client.post_receive(
                    {"repo": name, "ref": ref, "oldOid": old, "newOid": new, "claimIds": ids}
                )
                for claim_id in done["integrated"]:
                    _say([f"{ref}: claim {claim_id} integrated"])
    except DetenteError as exc:
        _say([f"could not report the push to {url} ({exc.code}: {exc.detail})"])
    return 0
