"""The local ``post-commit`` hook: a commit moved a claim's branch; merge-check it.

After git has made the commit (a ``post-commit`` hook cannot undo or refuse it), the hook
asks detente to merge-check the committing claim's branch
(``POST /v1/claims/{id}/merge-check``, :mod:`detente.service.merge_checks`): a predicted
conflict with another live claim opens a room at once, and the paths the commit took
outside the claim's scope are recorded as drift. It prints one line per finding and
always exits 0: nothing it finds, and nothing that fails (an unreachable server, a slow
check), stands in the commit's way. A repository detente does not coordinate costs one
Python start (the same test as the ``pre-commit`` guard's); no claim checked out here
means nothing to check.

The check is bounded: the server is asked with a read timeout of
:data:`TIMEOUT_SECONDS`; in local mode (no server) the service runs in-process on the
repository's store.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from detente.errors import DetenteError, ValidationError

if TYPE_CHECKING:
    from detente.client import Client

__all__ = ["TIMEOUT_SECONDS", "run"]

#: Seconds the hook waits for a server's merge check before it gives up (silently).
TIMEOUT_SECONDS = 20.0


def _say(lines: list[str]) -> None:
    sys.stderr.write("".join(f"detente: {line}\n" for line in lines))


def run(*, worktree: Path | None = None) -> int:
    """Merge-check the committing claim's branch; print what it predicts.

    Args:
        worktree: where git runs the hook (default: the current directory).

    Returns:
        0, always.
    """
    from detente.hooks.gitread import HookRepo
    from detente.hooks.pre_commit import untouched

    here = worktree or Path.cwd()
    try:
        repo = HookRepo(here)
        if untouched(repo):
            return 0
        found = _check(here)
    except ValidationError:
        return 0  # nothing to check here (the claim names no branch, no checkout served)
    except (DetenteError, OSError) as exc:
        code = getattr(exc, "code", type(exc).__name__)
        _say([f"merge check skipped ({code}: {exc})"])
        return 0
    if found is not None:
        _say(describe(found))
    return 0


def _check(here: Path) -> dict[str, Any] | None:
    """The merge check's answer for the claim checked out here (None: no claim)."""
    from detente.client.connect import connect_server

    client, info = connect_server(here)
    if client is None:
        from detente.client.connect import open_local
        from detente.client.local_check import existing_store

        store = existing_store(info)
        if store is None:
            return None
        client = open_local(here, store_url=store, opened=info)
    with client:
        return _ask(client, here)


def _ask(client: Client, here: Path) -> dict[str, Any] | None:
    from detente.hooks.pre_commit import committing_claim

    claim_id = committing_claim(client, client.repo_name or "", here)
    if claim_id is None:
        return None
    return dict(client.merge_check(claim_id))


def describe(checked: dict[str, Any]) -> list[str]:
    """One line per finding of a merge check's answer (none when all is clean)."""
    lines: list[str] = []
    merge = checked.get("mergeCheck") or {}
    rooms = {m["id"] for m in checked.get("meetings", [])}
    for conflict in merge.get("conflicts", []):
        files = ", ".join(conflict["files"])
        lines.append(f"{checked['claimId']} would conflict with {conflict['against']} in {files}")
    for room in sorted(rooms):
        lines.append(f"  settle it in meeting {room}: detente meeting show {room}")
    if checked.get("drifted"):
        lines.append(
            f"{checked['claimId']} changed paths outside its scope: "
            + ", ".join(checked["drifted"])
        )
    for path in checked.get("autoClaimed", []):
        lines.append(f"  auto-claimed {path}")
    return lines
