"""Request bodies of the gate operations: deployments, patches and the git hooks' checks
(pydantic, camelCase on the wire, unknown fields refused)."""

from __future__ import annotations

from pydantic import Field

from detente.client.body import Body

__all__ = [
    "DeployIn",
    "DiscardIn",
    "MigrationIn",
    "PatchIn",
    "PolicyIn",
    "PostReceiveIn",
    "PreCommitIn",
    "PreReceiveIn",
    "PushedCommitIn",
]


class MigrationIn(Body):
    id: str = Field(min_length=1, max_length=500)
    status: str = Field(min_length=1, max_length=100)


class DeployIn(Body):
    repo: str | None = None
    claim_id: str = Field(min_length=1)
    commit_oid: str = Field(min_length=4, max_length=64)
    expected_prev_commit_oid: str | None = Field(max_length=64)
    migrations: list[MigrationIn] = []
    unresolved_risks: list[str] = []


class PolicyIn(Body):
    repo: str | None = None
    expected_revision: int = Field(strict=True)
    max_unresolved_risks: int | None = Field(default=None, strict=True)
    require_migrations_applied: bool = True
    require_integrated: bool = False


class PatchIn(Body):
    claim_id: str = Field(min_length=1)
    base_commit: str = Field(min_length=4, max_length=64)
    format: str = "mbox"
    mbox: str = Field(min_length=1)


class DiscardIn(Body):
    expected_revision: int = Field(strict=True)
    reason: str | None = Field(default=None, max_length=4000)


class PushedCommitIn(Body):
    oid: str = Field(min_length=4, max_length=64)
    claim_ids: list[str] = []
    files: list[str] = []


class PreReceiveIn(Body):
    repo: str = Field(min_length=1)
    ref: str = Field(min_length=1)
    old_oid: str = Field(min_length=4, max_length=64)
    new_oid: str = Field(min_length=4, max_length=64)
    fast_forward: bool
    commits: list[PushedCommitIn] = []


class PostReceiveIn(Body):
    repo: str = Field(min_length=1)
    ref: str = Field(min_length=1)
    old_oid: str = Field(min_length=4, max_length=64)
    new_oid: str = Field(min_length=4, max_length=64)
    claim_ids: list[str] = []


class PreCommitIn(Body):
    repo: str = Field(min_length=1)
    claim_id: str | None = None
    paths: list[str] = Field(min_length=1)
