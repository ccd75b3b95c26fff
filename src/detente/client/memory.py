"""The memory-document operations: register, list, patch a section, write a whole file,
append, render generated regions, reconcile.

Writes name what they expect (section or document revision, file hash, fencing token);
a stale write is ``revision_conflict`` / ``stale_fencing_token`` and writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from detente.client.base import ClientBase
from detente.operations import memory as routes

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = ["MemoryOperations"]


class MemoryOperations(ClientBase):
    """``/v1/memory/...``: one method per operation."""

    def register_document(self, repo: str, path: str, doc_class: str) -> wire.DocumentOut:
        """``POST /v1/memory/documents`` (``class`` generated|append_only|section_owned|
        private): ``{document}``; ``revision_conflict`` when already registered."""
        body = {"repo": repo, "path": path, "class": doc_class}
        return self._call(routes.REGISTER_DOCUMENT, body=body)

    def list_documents(
        self, repo: str, path: str | None = None, *, text: bool = False
    ) -> wire.DocumentList:
        """``GET /v1/memory/documents``: ``{documents[]}`` with sections, ``onDisk`` (the
        integration branch's copy), ``checkouts[]``, and ``text`` when asked."""
        params = {"repo": repo, "path": path, **({"text": True} if text else {})}
        return self._call(routes.LIST_DOCUMENTS, params=params)

    def patch_section(self, body: Mapping[str, Any]) -> wire.SectionPatchOut:
        """``POST /v1/memory/sections/patch`` ``{repo, path, sectionKey,
        expectedSectionRevision, expectedFileHash, claimId, fencingToken, worktree?,
        patch {body} | {diff}}``: ``{document, section, merged}``."""
        return self._call(routes.PATCH_SECTION, body=body)

    def write_document(self, body: Mapping[str, Any]) -> wire.DocumentOut:
        """``POST /v1/memory/documents/write`` ``{repo, path, expectedRevision,
        expectedFileHash, claimId, fencingToken, content, worktree?}``: ``{document}``."""
        return self._call(routes.WRITE_DOCUMENT, body=body)

    def append_entry(self, body: Mapping[str, Any]) -> wire.AppendOut:
        """``POST /v1/memory/append`` ``{repo, path, claimId, fencingToken, entry,
        worktree?}``: ``{document, entry {offset, length}}``."""
        return self._call(routes.APPEND_ENTRY, body=body)

    def render(
        self, repo: str, path: str | None = None, worktree: str | None = None
    ) -> wire.RenderOut:
        """``POST /v1/memory/render``: ``{results[]}``, one per generated document."""
        body = {"repo": repo, "path": path, "worktree": worktree}
        return self._call(routes.RENDER, body=body)

    def reconcile(self, body: Mapping[str, Any]) -> wire.DocumentOut:
        """``POST /v1/memory/reconcile`` ``{repo, path, decision: upstream|overlay,
        reconciliationId?, regionKey?, expectedRevision?, worktree?}``: ``{document}``."""
        return self._call(routes.RECONCILE, body=body)
