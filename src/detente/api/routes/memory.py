"""Memory document routes (API.md "Memory documents", plus write, append, render, reconcile).

- ``POST /v1/memory/documents`` ``{repo, path, class}``: ``201 {document}``.
- ``GET /v1/memory/documents?repo=&path=``: ``200 {documents[]}``.
- ``POST /v1/memory/sections/patch`` ``{repo, path, sectionKey, expectedSectionRevision,
  expectedFileHash, claimId, fencingToken, worktree?, patch {body} | {diff}}``:
  ``200 {document, section, merged}``.
- ``POST /v1/memory/documents/write`` ``{repo, path, expectedRevision, expectedFileHash,
  claimId, fencingToken, content, worktree?}``: ``200 {document}``.
- ``POST /v1/memory/append`` ``{repo, path, claimId, fencingToken, entry, worktree?}``:
  ``200 {document, entry {offset, length}}``.
- ``POST /v1/memory/render`` ``{repo, path?, worktree?}``: ``200 {results[]}``, one
  ``{path, document, rendered[], kept[], reconciliations[]}`` or ``{path, error}`` each.
- ``POST /v1/memory/reconcile`` ``{repo, path, decision: upstream|overlay,
  reconciliationId?, regionKey?, expectedRevision?, worktree?}``: ``200 {document}``.

Errors: ``409 revision_conflict`` (stale section/document revision or file hash; a deferred
edit also names ``artifactId`` and ``meetingId``), ``409 stale_fencing_token``,
``409 overlap_blocking``, ``409 lease_expired``, ``403 forbidden`` (the class forbids the
operation, or the claim does not cover the target), ``404 not_found``,
``422 validation_error`` (malformed markers name the ``line``).
"""

from __future__ import annotations

from fastapi import APIRouter

from detente.client import routes as op
from detente.client import wire
from detente.client.calls import ServiceCalls
from detente.client.memory_bodies import (
    AppendIn,
    ReconcileIn,
    RegisterIn,
    RenderIn,
    SectionPatchIn,
    WriteIn,
)


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter(tags=["memory"])

    @r.post(op.REGISTER_DOCUMENT.path, operation_id=op.REGISTER_DOCUMENT.name, status_code=201)
    def register(body: RegisterIn) -> wire.DocumentOut:
        """Register a memory document: path and class (generated, append_only,
        section_owned, private). ``409 revision_conflict`` if already registered."""
        return calls.register_document(body)

    @r.get(op.LIST_DOCUMENTS.path, operation_id=op.LIST_DOCUMENTS.name)
    def list_documents(repo: str, path: str | None = None) -> wire.DocumentList:
        """Registered documents with sections (key, title, revision, hash, ownerClaimId)
        and ``onDisk {fileHash, inSync}``."""
        return calls.list_documents(repo, path)

    @r.post(op.PATCH_SECTION.path, operation_id=op.PATCH_SECTION.name)
    def patch_section(body: SectionPatchIn) -> wire.SectionPatchOut:
        """Patch one section; only that section's bytes change."""
        return calls.patch_section(body)

    @r.post(op.WRITE_DOCUMENT.path, operation_id=op.WRITE_DOCUMENT.name)
    def write_document(body: WriteIn) -> wire.DocumentOut:
        """Replace a whole file; a stale write names the sections it would destroy."""
        return calls.write_document(body)

    @r.post(op.APPEND_ENTRY.path, operation_id=op.APPEND_ENTRY.name)
    def append(body: AppendIn) -> wire.AppendOut:
        """Append an entry to an append-only document (serialized, never interleaved)."""
        return calls.append_entry(body)

    @r.post(op.RENDER.path, operation_id=op.RENDER.name)
    def render(body: RenderIn) -> wire.RenderOut:
        """Re-render generated regions; user edits stay and open reconciliations."""
        return calls.render(body)

    @r.post(op.RECONCILE.path, operation_id=op.RECONCILE.name)
    def reconcile(body: ReconcileIn) -> wire.DocumentOut:
        """Resolve a reconciliation: ``upstream`` or ``overlay``; region re-rendered."""
        return calls.reconcile(body)

    return r
