"""Request bodies of the gate operations: deployments, patches and the git hooks' checks
(pydantic, camelCase on the wire, unknown fields refused)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from detente.domain.gates.deployments import Deploy, DeployPolicy, Migration, SetPolicy
from detente.domain.gates.findings import PushedCommit
from detente.domain.gates.patches import DiscardPatch, PublishPatch
from detente.operations.body import Body

if TYPE_CHECKING:
    from detente.service.edit_check import EditQuery

__all__ = [
    "DeployIn",
    "DiscardIn",
    "EditCheckIn",
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

    def to_command(self, env: str) -> Deploy:
        return Deploy(
            repo=self.repo or "",
            environment=env,
            claim_id=self.claim_id,
            commit_oid=self.commit_oid,
            expected_prev_commit_oid=self.expected_prev_commit_oid,
            migrations=tuple(Migration(m.id, m.status) for m in self.migrations),
            unresolved_risks=tuple(self.unresolved_risks),
        )


class PolicyIn(Body):
    repo: str | None = None
    expected_revision: int = Field(strict=True)
    max_unresolved_risks: int | None = Field(default=None, strict=True)
    require_migrations_applied: bool = True
    require_integrated: bool = False

    def to_command(self, env: str) -> SetPolicy:
        policy = DeployPolicy(
            max_unresolved_risks=self.max_unresolved_risks,
            require_migrations_applied=self.require_migrations_applied,
            require_integrated=self.require_integrated,
        )
        return SetPolicy(self.repo or "", env, policy, self.expected_revision)


class PatchIn(Body):
    claim_id: str = Field(min_length=1)
    base_commit: str = Field(min_length=4, max_length=64)
    format: str = "mbox"
    mbox: str = Field(min_length=1)

    def to_command(self) -> PublishPatch:
        return PublishPatch(self.claim_id, self.base_commit, self.mbox, self.format)


class DiscardIn(Body):
    expected_revision: int = Field(strict=True)
    reason: str | None = Field(default=None, max_length=4000)

    def to_command(self, patch_id: str) -> DiscardPatch:
        return DiscardPatch(patch_id, self.expected_revision, self.reason)


class PushedEditIn(Body):
    """What a pushed commit does to one file's symbols (the hook read both sides)."""

    path: str = Field(min_length=1)
    symbols: list[str] = []
    outside: bool = True


class PushedCommitIn(Body):
    oid: str = Field(min_length=4, max_length=64)
    claim_ids: list[str] = []
    files: list[str] = []
    edits: list[PushedEditIn] = []


class PreReceiveIn(Body):
    repo: str = Field(min_length=1)
    ref: str = Field(min_length=1)
    old_oid: str = Field(min_length=4, max_length=64)
    new_oid: str = Field(min_length=4, max_length=64)
    fast_forward: bool
    commits: list[PushedCommitIn] = []

    def pushed(self) -> list[PushedCommit]:
        """The pushed commits as the domain sees them."""
        return [
            PushedCommit(
                c.oid,
                tuple(c.claim_ids),
                tuple(c.files),
                tuple((e.path, tuple(e.symbols), e.outside) for e in c.edits),
            )
            for c in self.commits
        ]


class PostReceiveIn(Body):
    repo: str = Field(min_length=1)
    ref: str = Field(min_length=1)
    old_oid: str = Field(min_length=4, max_length=64)
    new_oid: str = Field(min_length=4, max_length=64)
    claim_ids: list[str] = []


class PreCommitIn(Body):
    """``POST /v1/hooks/pre-commit``: the staged paths and, when the hook read them, what
    the change does to their symbols (``edits``; else the claim's worktree is read)."""

    repo: str = Field(min_length=1)
    claim_id: str | None = None
    paths: list[str] = Field(min_length=1)
    #: What the staged diff does to symbols (the hook read the index); None: the server
    #: reads the claim's worktree instead.
    edits: list[PushedEditIn] | None = None

    def staged_edits(self) -> dict[str, tuple[tuple[str, ...], bool]] | None:
        """``path -> (innermost symbols touched, lines outside every symbol)``, or None."""
        if self.edits is None:
            return None
        return {e.path: (tuple(e.symbols), e.outside) for e in self.edits}


class EditCheckIn(Body):
    """``POST /v1/hooks/edit-check``: may the session (or the claim) write these files now?
    The whole judgement in one answer (:mod:`detente.service.edit_check`)."""

    repo: str = Field(min_length=1)
    paths: list[str] = Field(min_length=1, max_length=1000)
    #: The agent session editing: its claim judges the edit (else the worktree's).
    session_id: str | None = Field(default=None, min_length=1, max_length=128)
    #: The claim to judge under, when the caller knows it (wins over the session's).
    claim_id: str | None = None
    #: The worktree the edit happens in (its top directory) and its checked-out branch.
    worktree: str | None = Field(default=None, max_length=4096)
    branch: str | None = Field(default=None, max_length=1000)
    #: What the edit does to symbols; a file missing from it is judged whole.
    edits: list[PushedEditIn] = []

    def to_query(self) -> EditQuery:
        """The service's question."""
        from detente.service.edit_check import EditQuery

        return EditQuery(
            repo=self.repo,
            paths=tuple(self.paths),
            session_id=self.session_id,
            claim_id=self.claim_id,
            worktree=self.worktree,
            branch=self.branch,
            edits={e.path: (tuple(e.symbols), e.outside) for e in self.edits},
        )
