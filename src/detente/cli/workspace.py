"""The execution plane as the CLI drives it: claim branches, worktrees and local evidence.

A claim is opened in this order, so that a refused claim leaves nothing behind and an
accepted one gets exactly its base commit:

1. the base revision is resolved to an OID *now* (later commits cannot leak in);
2. a free branch ``claim/<slug>-<rand>`` and a free worktree directory are chosen;
3. the claim is posted with that branch and worktree;
4. the worktree is created at exactly the base OID on that branch. If that fails, the
   claim is abandoned with the reason, and both facts are reported.
"""

from __future__ import annotations

import contextlib
import getpass
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from detente.cli.evidence import evidence, local_worktree
from detente.client import Client
from detente.client.seeds import memory_impacts
from detente.errors import DetenteError, ValidationError
from detente.vcs import (
    Worktree,
    claim_branch_name,
    create_worktree,
    current_oid,
    diff_summary,
    list_worktrees,
    slugify,
)

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = [
    "OpenResult",
    "Placement",
    "claim_body",
    "default_agent",
    "evidence",
    "local_worktree",
    "open_claim",
    "plan_placement",
    "release_record",
]

AGENT_ENV = "DETENTE_AGENT"
_ATTEMPTS = 8


@dataclass(frozen=True)
class Placement:
    """Where a claim's work will live: its topic branch and worktree directory."""

    branch: str
    path: Path


@dataclass
class OpenResult:
    """What ``open_claim`` did.

    Attributes:
        response: the server's ``{claim, overlaps[], meeting, meetings[]}``.
        worktree: the created worktree, or None (``--no-worktree``, or creation failed).
        failure: why the worktree could not be created (the claim was then abandoned).
        abandoned: the abandoned claim record after a failure, if abandoning worked.
        abandon_error: why abandoning failed, if it did.
    """

    response: wire.ClaimView
    worktree: Worktree | None = None
    failure: DetenteError | None = None
    abandoned: wire.Claim | None = None
    abandon_error: DetenteError | None = None


def agent_name(client: Any, agent: str | None, session_id: str | None) -> str:
    """The agent a new claim names: ``--agent``; else the name the session registered
    under (``detente agents register``), when a session is given and known; else
    :func:`default_agent`."""
    if agent:
        return agent
    if session_id and not os.environ.get(AGENT_ENV):
        from detente.errors import NotFoundError

        try:
            return str(client.get_agent(session_id)["agent"]["agentName"])
        except NotFoundError:
            pass
    return default_agent()


def default_agent() -> str:
    """The agent name when ``--agent`` is not given: ``$DETENTE_AGENT``, else the user."""
    name = os.environ.get(AGENT_ENV) or os.environ.get("USER")
    if not name:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            name = "anonymous"
    return name


def plan_placement(repo: Path, objective: str, worktree_dir: Path | None = None) -> Placement:
    """Choose a branch that does not exist yet and a worktree directory that is free.

    Args:
        repo: a directory inside any working tree of the repository.
        objective: the claim's objective (slugged into the branch name).
        worktree_dir: the worktree directory to use; default
            ``<main worktree>/../<repo name>.worktrees/<slug>-<rand>``.

    Returns:
        The :class:`Placement`.

    Raises:
        ValidationError: ``validation_error`` (field ``worktree``) when ``worktree_dir``
            exists and is not an empty directory, or the directory cannot be created
            (checked before the claim is posted, so a refused place leaves no claim).
    """
    import secrets  # here, not at import: a read command needs no random source

    main = list_worktrees(repo)[0].path
    slug = slugify(objective)
    for _ in range(_ATTEMPTS):
        branch = claim_branch_name(slug, secrets.token_hex(4))
        if current_oid(repo, f"refs/heads/{branch}") is not None:
            continue
        tail = branch.removeprefix("claim/")
        path = worktree_dir or main.parent / f"{main.name}.worktrees" / tail
        path = path.absolute()
        if _occupied(path):
            if worktree_dir is not None:
                raise ValidationError(
                    f"worktree directory {path} already exists and is not empty",
                    field="worktree",
                )
            continue
        _check_creatable(path)
        return Placement(branch=branch, path=path)
    raise ValidationError("could not find a free claim branch name; try again", field="branch")


def _occupied(path: Path) -> bool:
    return path.exists() and (not path.is_dir() or any(path.iterdir()))


def _check_creatable(path: Path) -> None:
    """Create ``path`` (and its missing parents) and remove what was created: the worktree
    can be made there. Permission bits alone cannot tell (root may write anywhere, yet not
    under ``/proc``), so the directory is really made.

    Raises:
        ValidationError: ``validation_error`` (field ``worktree``) naming the OS's reason.
    """
    missing: list[Path] = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    try:
        for directory in reversed(missing):
            directory.mkdir()
    except OSError as exc:
        raise ValidationError(
            f"cannot create the worktree directory {path}: {exc.strerror or exc}; "
            "choose another --worktree-dir",
            field="worktree",
        ) from None
    finally:
        for directory in missing:
            # not created (the mkdir above failed first) or no longer empty: leave it
            with contextlib.suppress(OSError):
                directory.rmdir()


def claim_body(
    *,
    repo: str,
    objective: str,
    base_commit: str,
    agent: str,
    session: str | None = None,
    paths: Sequence[str] = (),
    modules: Sequence[str] = (),
    symbols: Sequence[str] = (),
    contracts: Sequence[str] = (),
    tests: Sequence[str] = (),
    deploy: str | None = None,
    memory: Sequence[str] = (),
    ttl: int = 300,
) -> dict[str, Any]:
    """The ``POST /v1/claims`` seed (camelCase), without branch and worktree.

    ``memory`` entries are ``PATH`` (the whole file) or ``PATH#section``; entries naming
    the same path are merged into one impact.
    """
    return {
        "repo": repo,
        "objective": objective,
        "baseCommit": base_commit,
        "paths": list(paths),
        "modules": list(modules),
        "symbols": list(symbols),
        "expectedContractChanges": [contract_seed(c) for c in contracts],
        "testResponsibility": list(tests),
        "deploymentResponsibility": deploy,
        "memoryImpacts": memory_impacts(memory),
        "leaseTtlSeconds": ttl,
        "agent": {"id": agent, "name": agent, "sessionId": session},
    }


def contract_seed(text: str) -> str | dict[str, str]:
    """``--contract TYPE:AREA:CHANGE`` as ``{type, area, change}`` (``TYPE:AREA`` gives no
    change; a text without ``:`` is a plain area, today's shape). Overlap compares areas."""
    parts = [p.strip() for p in text.split(":", 2)]
    if len(parts) == 1:
        return parts[0]
    seed = {"type": parts[0], "area": parts[1]}
    if len(parts) == 3 and parts[2]:
        seed["change"] = parts[2]
    return seed


def open_claim(
    client: Client,
    body: Mapping[str, Any],
    *,
    repo: Path,
    placement: Placement | None,
) -> OpenResult:
    """Post the claim, then create its worktree (see the module docstring).

    Args:
        client: the API client.
        body: the seed from :func:`claim_body`; ``baseCommit`` must be a full OID.
        repo: a directory inside the repository (where the worktree is added).
        placement: branch and directory from :func:`plan_placement`; None for no worktree.

    Returns:
        The :class:`OpenResult`; ``failure`` is set when the worktree could not be made.

    Raises:
        DetenteError: the server refused the claim (nothing was created).
    """
    seed = dict(body)
    if placement is not None:
        seed["branch"] = placement.branch
        seed["worktree"] = str(placement.path)
    response = client.open_claim(seed)
    result = OpenResult(response=response)
    if placement is None:
        return result
    claim = response["claim"]
    try:
        result.worktree = create_worktree(
            repo, placement.path, placement.branch, str(claim["baseCommit"])
        )
    except DetenteError as exc:
        result.failure = exc
        reason = f"worktree creation failed: {exc.detail}"
        try:
            record = client.abandon(
                claim["id"], expected_claim_revision=int(claim["revision"]), reason=reason
            )
            result.abandoned = record["claim"]
        except DetenteError as abandon_exc:
            result.abandon_error = abandon_exc
    return result


def release_record(claim: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """Head commit and ``{files, insertions, deletions}`` of the claim's local worktree.

    Returns:
        ``(None, {})`` when the worktree is not on this machine.
    """
    worktree = local_worktree(claim)
    if worktree is None:
        return None, {}
    head = current_oid(worktree, "HEAD")
    summary = diff_summary(worktree, str(claim["baseCommit"]))
    return head, {
        "files": summary.files,
        "insertions": summary.insertions,
        "deletions": summary.deletions,
    }
