"""Patch queue use cases (API.md "Deployments and patches": ``/v1/patches``)."""

from __future__ import annotations

from detente.domain.gates.model import Patch
from detente.domain.gates.patches import (
    LISTED_STATUSES,
    STATUSES,
    DiscardPatch,
    PublishPatch,
    decide_discard,
    decide_publish,
    patch_id,
)
from detente.errors import NotFoundError, ValidationError
from detente.service.core import ServiceCore

__all__ = ["PatchesService"]


class PatchesService:
    """Publish, list, read and discard patch artifacts."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def publish_patch(self, cmd: PublishPatch) -> tuple[Patch, bool]:
        """Store a ``git format-patch`` mbox for ``cmd.claim_id``'s repository.

        Returns:
            ``(patch, created)``; ``created`` is False when the same content was already
            published in that repository (content-addressed: the same record comes back).

        Raises:
            NotFoundError: unknown claim.
            ValidationError: ``format``, ``baseCommit`` or ``mbox`` (field named).
        """
        repo = self.core.repo_of_claim(cmd.claim_id)
        pid = patch_id(repo, cmd.mbox)
        return self.core.run(
            repo,
            lambda s: decide_publish(s, cmd, self.core.ids),
            lambda s, stored: (s.gates.patches[pid], bool(stored)),
        )

    def get_patch(self, patch_id_: str) -> Patch:
        """One artifact (with its mbox). Raises ``not_found``."""
        for name in sorted(self.core.repos):
            state = self.core.fresh(name)
            with self.core.lock(name):
                patch = state.gates.patches.get(patch_id_)
            if patch is not None:
                return patch
        raise NotFoundError(f"no patch {patch_id_!r}", patchId=patch_id_)

    def list_patches(self, *, repo: str | None = None, status: str | None = None) -> list[Patch]:
        """The queue: ``published`` patches unless ``status`` names another (or ``all``),
        oldest first.

        Raises:
            ValidationError: unknown repository or status.
        """
        if status is not None and status not in (*STATUSES, "all"):
            raise ValidationError(
                f"status must be one of {', '.join(STATUSES)} or all", field="status"
            )
        wanted = LISTED_STATUSES if status is None else None if status == "all" else {status}
        out: list[Patch] = []
        for name in self.core.names(repo):
            state = self.core.fresh(name)
            with self.core.lock(name):
                out += [
                    p for p in state.gates.patches.values() if wanted is None or p.status in wanted
                ]
        return sorted(out, key=lambda p: (p.created_at, p.id))

    def discard_patch(self, cmd: DiscardPatch) -> Patch:
        """Take a published patch out of the queue.

        Raises:
            NotFoundError, RevisionConflict (``expectedRevision``), InvalidTransition.
        """
        repo = self.get_patch(cmd.patch_id).repo
        return self.core.run(
            repo,
            lambda s: decide_discard(s, cmd, self.core.ids),
            lambda s, _: s.gates.patches[cmd.patch_id],
        )
