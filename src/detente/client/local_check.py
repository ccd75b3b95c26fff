"""The ``pre-commit`` check in local mode, on the repository's own store, if it has one.

A git hook runs in every repository its hooks directory serves, most of which detente has
never seen. :func:`check_commit_locally` therefore opens the store only when it exists
(``$DETENTE_STORE``, else ``<common git dir>/detente/detente.db``: nothing is created,
and a repository without a store is not checked at all), and calls the service's check
directly: the hook builds the request itself, so the pydantic models of the HTTP edge
(about 0.1 s to import) have nothing to validate. It builds the service's core alone
(:func:`~detente.runtime.build_core`: the store and the state, none of the write
services) and asks :func:`detente.service.commit_check.check_commit`, the function the
server's pre-commit operation asks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from detente.domain.named_authority import Edit
    from detente.operations.wire import CommitCheck
    from detente.vcs.repo import RepoInfo

__all__ = ["check_commit_locally", "existing_store"]

_STORE_ENV = "DETENTE_STORE"  # detente.runtime.STORE_ENV, without importing the runtime


def existing_store(info: RepoInfo) -> str | None:
    """The URL of ``info``'s store when it exists: ``$DETENTE_STORE`` (a ``sqlite:///``
    file that exists, or any other backend), else the default SQLite file when it exists.

    Returns:
        The store URL, or None: this repository has no detente store.
    """
    named = os.environ.get(_STORE_ENV)
    if named:
        if named.startswith("sqlite:///"):
            return named if Path(named[len("sqlite:///") :]).is_file() else None
        return named
    default = info.common_dir / "detente" / "detente.db"
    return f"sqlite:///{default}" if default.is_file() else None


def check_commit_locally(
    info: RepoInfo,
    claim_id: str | None,
    paths: Sequence[str],
    *,
    branch: str | None,
    read_edits: Callable[[], Mapping[str, Edit] | None],
) -> CommitCheck | None:
    """May ``claim_id`` commit ``paths``? The service's answer, in this process.

    Args:
        info: the repository (:func:`~detente.vcs.repo.open_repo`).
        claim_id: the committing claim; None: the one live claim whose ``branch`` is
            ``branch`` (nobody's when there is none or several).
        paths: the staged repo-relative paths.
        branch: the checked-out branch (short name), None when HEAD is detached.
        read_edits: what the staged diff does to symbols (``path -> (symbols, outside)``),
            called only when symbols matter to this commit.

    Returns:
        ``{ok, claimId, problems[], findings[], reasons[]}``, or None when the repository
        has no detente store (nothing was opened or created).

    Raises:
        DetenteError: ``validation_error``, ``not_found`` (an unknown claim),
            ``store_unavailable``.
    """
    url = existing_store(info)
    if url is None:
        return None
    from detente.runtime import build_core
    from detente.service.commit_check import branch_claim, check_commit

    core = build_core([info.path], store_url=url, opened=[info])
    try:
        if claim_id is None and branch:
            claim_id = branch_claim(core, info.name, branch)
        check = check_commit(core, info.name, claim_id, paths, read_edits=read_edits)
        return cast("CommitCheck", check.to_wire())
    finally:
        core.store.close()
