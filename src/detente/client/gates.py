"""The gate operations: the patch queue, deployments, and the git hooks' checks.

(Completion, the first gate, is a claim operation:
:meth:`~detente.client.claims.ClaimOperations.complete`.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from detente.client.base import ClientBase
from detente.operations import gates as routes

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = ["GateOperations"]


class GateOperations(ClientBase):
    """``/v1/patches...``, ``/v1/deployments/...`` and ``/v1/hooks/...``."""

    def publish_patch(self, claim_id: str, base_commit: str, mbox: str) -> wire.PatchOut:
        """``POST /v1/patches`` (content-addressed): ``{patch, created}``."""
        body = {"claimId": claim_id, "baseCommit": base_commit, "format": "mbox", "mbox": mbox}
        return self._call(routes.PUBLISH_PATCH, body=body)

    def list_patches(self, *, repo: str | None = None, status: str | None = None) -> wire.PatchList:
        """``GET /v1/patches``: ``{patches[]}`` (without their mbox)."""
        return self._call(routes.LIST_PATCHES, params={"repo": repo, "status": status})

    def get_patch(self, patch_id: str) -> wire.PatchOut:
        """``GET /v1/patches/{id}``: ``{patch}`` with its ``mbox``."""
        return self._call(routes.GET_PATCH, path={"patch_id": patch_id})

    def discard_patch(
        self, patch_id: str, *, expected_revision: int, reason: str | None = None
    ) -> wire.PatchOut:
        """``POST /v1/patches/{id}/discard``: ``{patch}``."""
        body = {"expectedRevision": expected_revision, "reason": reason}
        return self._call(routes.DISCARD_PATCH, path={"patch_id": patch_id}, body=body)

    def deploy(self, env: str, body: Mapping[str, Any]) -> wire.DeploymentView:
        """``POST /v1/deployments/{env}`` ``{repo?, claimId, commitOid,
        expectedPrevCommitOid, migrations[], unresolvedRisks[]}``: ``{deployment,
        history[], environment, policy}``; ``stale_base`` / ``evidence_rejected``."""
        return self._call(routes.DEPLOY, path={"env": env}, body=body)

    def get_deployment(self, env: str, *, repo: str | None = None) -> wire.DeploymentView:
        """``GET /v1/deployments/{env}``: ``{deployment, history[], environment, policy}``."""
        return self._call(routes.GET_DEPLOYMENT, path={"env": env}, params={"repo": repo})

    def set_deploy_policy(self, env: str, body: Mapping[str, Any]) -> wire.DeploymentView:
        """``PUT /v1/deployments/{env}/policy`` ``{repo?, expectedRevision,
        maxUnresolvedRisks, requireMigrationsApplied, requireIntegrated}``."""
        return self._call(routes.SET_DEPLOY_POLICY, path={"env": env}, body=body)

    def pre_receive(self, body: Mapping[str, Any]) -> wire.PushChecked:
        """``POST /v1/hooks/pre-receive``: ``{ok, ref, commits}`` or ``evidence_rejected``."""
        return self._call(routes.PRE_RECEIVE, body=body)

    def post_receive(self, body: Mapping[str, Any]) -> wire.PushRecorded:
        """``POST /v1/hooks/post-receive``: ``{integrated[]}``."""
        return self._call(routes.POST_RECEIVE, body=body)

    def pre_commit(
        self,
        repo: str,
        claim_id: str | None,
        paths: Sequence[str],
        *,
        edits: Sequence[Mapping[str, Any]] | None = None,
    ) -> wire.CommitCheck:
        """``POST /v1/hooks/pre-commit``: ``{ok, claimId, problems[], findings[], reasons[]}``.

        ``edits`` (``[{path, symbols[], outside}]``): what the staged diff does to symbols;
        without it the server reads the claim's worktree."""
        body: dict[str, Any] = {"repo": repo, "claimId": claim_id, "paths": list(paths)}
        if edits is not None:
            body["edits"] = [dict(e) for e in edits]
        return self._call(routes.PRE_COMMIT, body=body)

    def check_edit(
        self,
        repo: str,
        paths: Sequence[str],
        *,
        session_id: str | None = None,
        claim_id: str | None = None,
        worktree: str | None = None,
        branch: str | None = None,
        edits: Sequence[Mapping[str, Any]] | None = None,
    ) -> wire.EditCheck:
        """``POST /v1/hooks/edit-check``: the whole judgement of an edit in one answer,
        ``{decision: allow|deny, claim, check, holders[], rooms[], unclaimed[],
        symbolsMatter, options[{action, command}]}``.

        Args:
            repo: the repository's name.
            paths: the repo-relative files the edit writes.
            session_id: the agent session editing (its claim judges the edit).
            claim_id: the claim to judge under (wins over the session's).
            worktree: the worktree the edit happens in; ``branch``: its branch.
            edits: ``[{path, symbols[], outside}]``: what the edit does to symbols (a
                file left out is judged whole).

        Raises:
            ValidationError: ``validation_error`` (no path, a malformed one, an unknown
                repository); NotFoundError: ``not_found`` (an unknown ``claim_id``).
        """
        body: dict[str, Any] = {"repo": repo, "paths": list(paths)}
        for key, value in (
            ("sessionId", session_id),
            ("claimId", claim_id),
            ("worktree", worktree),
            ("branch", branch),
        ):
            if value is not None:
                body[key] = value
        if edits:
            body["edits"] = [dict(e) for e in edits]
        return self._call(routes.CHECK_EDIT, body=body)
