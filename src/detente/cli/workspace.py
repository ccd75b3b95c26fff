"""The execution plane as the CLI drives it: claim bodies, worktrees and local evidence.

The CLI asks the service for the claim's branch and worktree (``createWorktree``); the
service creates them inside the command that records the claim
(:mod:`detente.service.placement`), so a refused claim leaves nothing behind, git
refusing records nothing, and an accepted claim gets exactly its base commit:

1. the base revision is resolved to an OID once, now (by the service in local mode, by
   this process when a server answers: the server's checkout has another ``HEAD``);
2. the claim is posted with ``createWorktree`` (and ``--worktree-dir`` as ``worktree``);
3. the service creates ``claim/<slug>-<id tail>`` and its worktree at the base commit
   (default ``<main worktree>/../<repo>.worktrees/<slug>-<id tail>``), then records the
   claim naming them; if git refuses, nothing is recorded and the error is the answer.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from detente.cli.evidence import evidence, local_worktree
from detente.client import Client
from detente.client.seeds import ClaimSeed, claim_seed, contract_seed
from detente.vcs import current_oid, diff_summary

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = [
    "OpenResult",
    "claim_seed",
    "contract_seed",
    "created_worktree",
    "default_agent",
    "evidence",
    "local_worktree",
    "open_claim",
    "release_record",
]

AGENT_ENV = "DETENTE_AGENT"


@dataclass
class OpenResult:
    """What ``open_claim`` did.

    Attributes:
        response: the server's ``{claim, overlaps[], meeting, meetings[]}``.
        worktree: ``{path, branch, headOid}`` of the worktree the service created, or
            None (``--no-worktree``, a draft).
    """

    response: wire.ClaimView
    worktree: dict[str, str] | None = None


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


def open_claim(
    client: Client,
    body: ClaimSeed,
    *,
    worktree: bool = True,
    worktree_dir: Path | None = None,
) -> OpenResult:
    """Post the claim, asking the service to create its branch and worktree.

    Args:
        client: the API client.
        body: the seed from :func:`~detente.client.seeds.claim_seed`.
        worktree: ask for a worktree (``createWorktree``).
        worktree_dir: where (made absolute here, against this process's directory);
            default: the service's default place.

    Returns:
        The :class:`OpenResult`.

    Raises:
        DetenteError: the service refused the claim, or git refused its worktree
            (``branch_in_use``, ``stale_base``, ``validation_error`` with field
            ``worktree``, ``vcs_error``): nothing was recorded or created.
    """
    seed = body.copy()
    if worktree:
        seed["createWorktree"] = True
        if worktree_dir is not None:
            seed["worktree"] = str(worktree_dir.absolute())
    if client.mode == "local" and "takeoverOf" not in seed:
        from detente.client.inprocess import InProcessClient

        if isinstance(client, InProcessClient):  # the seed's values are typed: no model
            response = client.open_typed_claim(seed)
            return OpenResult(response, created_worktree(response["claim"], worktree))
    response = client.open_claim(seed)
    return OpenResult(response=response, worktree=created_worktree(response["claim"], worktree))


def created_worktree(claim: Mapping[str, Any], asked: bool) -> dict[str, str] | None:
    """``{path, branch, headOid}`` of the worktree created for ``claim`` (None when not
    ``asked``): its HEAD is the takeover predecessor's head, else the base commit."""
    if not asked or not claim.get("worktree"):
        return None
    info = claim.get("takeoverOf") or {}
    return {
        "path": str(claim["worktree"]),
        "branch": str(claim["branch"]),
        "headOid": str(info.get("headCommit") or claim["baseCommit"]),
    }


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
