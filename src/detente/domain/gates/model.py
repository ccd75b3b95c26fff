"""The gate records: published patches and deployment environments, with wire shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from detente.clock import format_time

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class Patch:
    """A published patch artifact (``git format-patch`` mbox), content-addressed.

    Attributes:
        id: ``pat_`` + 24 hex digits of SHA-256 over the repository name and the content.
        repo / claim_id / base_commit: where it comes from.
        sha256: SHA-256 of the mbox text (UTF-8), hex.
        size: the mbox size in bytes.
        files: paths the patch changes, sorted.
        commits: how many commits (messages) it holds.
        status: ``published``, ``integrated`` or ``discarded``.
        mbox: the artifact itself.
    """

    id: str
    repo: str
    claim_id: str
    base_commit: str
    sha256: str
    size: int
    files: tuple[str, ...]
    commits: int
    status: str
    revision: int
    created_at: datetime
    updated_at: datetime
    mbox: str
    reason: str | None = None
    last_event_id: str | None = None


@dataclass(frozen=True)
class Environment:
    """A deployment environment of one repository and its evented history.

    Attributes:
        id: ``<repo>:<name>`` (the stream is ``deployment/<id>``).
        current: the latest deployment ``{claimId, commitOid, prevCommitOid, migrations,
            unresolvedRisks, at, eventId}``, or None before the first.
        history: every deployment, oldest first.
        policy: the policy set for the environment, or None (the default applies).
    """

    id: str
    repo: str
    name: str
    revision: int
    created_at: datetime
    updated_at: datetime
    current: dict[str, Any] | None = None
    history: tuple[dict[str, Any], ...] = ()
    policy: dict[str, Any] | None = None
    last_event_id: str | None = None


@dataclass
class GateRegistry:
    """The gate records of one repository."""

    patches: dict[str, Patch] = field(default_factory=dict)
    environments: dict[str, Environment] = field(default_factory=dict)


def environment_id(repo: str, name: str) -> str:
    """The record id (and stream suffix) of environment ``name`` of ``repo``."""
    return f"{repo}:{name}"


def patch_to_wire(patch: Patch, *, with_mbox: bool = False) -> dict[str, Any]:
    """``{id, repo, claimId, baseCommit, sha256, size, files[], commits, status, ...}``;
    ``mbox`` only when asked (the artifact endpoint)."""
    body: dict[str, Any] = {
        "id": patch.id,
        "repo": patch.repo,
        "claimId": patch.claim_id,
        "baseCommit": patch.base_commit,
        "format": "mbox",
        "sha256": patch.sha256,
        "size": patch.size,
        "files": list(patch.files),
        "commits": patch.commits,
        "status": patch.status,
        "reason": patch.reason,
        "revision": patch.revision,
        "createdAt": format_time(patch.created_at),
        "updatedAt": format_time(patch.updated_at),
        "lastEventId": patch.last_event_id,
    }
    if with_mbox:
        body["mbox"] = patch.mbox
    return body


def environment_to_wire(env: Environment) -> dict[str, Any]:
    """``{id, repo, environment, revision, current, policy, createdAt, updatedAt}``."""
    return {
        "id": env.id,
        "repo": env.repo,
        "environment": env.name,
        "revision": env.revision,
        "current": env.current,
        "policy": env.policy,
        "deployments": len(env.history),
        "createdAt": format_time(env.created_at),
        "updatedAt": format_time(env.updated_at),
        "lastEventId": env.last_event_id,
    }
