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

from typing import Any

from fastapi import APIRouter
from pydantic import Field, model_validator

from detente.api.schemas import Body
from detente.domain.memory import commands as mc
from detente.service import Service


class RegisterIn(Body):
    """``POST /v1/memory/documents``."""

    repo: str = Field(min_length=1)
    path: str = Field(min_length=1, max_length=1000)
    doc_class: str = Field(alias="class")


class PatchBody(Body):
    """Exactly one of ``body`` (the section's new body) or ``diff`` (a unified diff)."""

    body: str | None = Field(default=None, max_length=mc.MAX_DOC_BYTES)
    diff: str | None = Field(default=None, max_length=mc.MAX_DOC_BYTES)

    @model_validator(mode="after")
    def _one_of(self) -> PatchBody:
        if (self.body is None) == (self.diff is None):
            raise ValueError("patch needs exactly one of body or diff")
        return self


class SectionPatchIn(Body):
    """``POST /v1/memory/sections/patch``."""

    repo: str = Field(min_length=1)
    path: str = Field(min_length=1, max_length=1000)
    section_key: str = Field(min_length=1, max_length=200)
    expected_section_revision: int = Field(strict=True, ge=0)
    expected_file_hash: str = Field(min_length=1, max_length=200)
    claim_id: str = Field(min_length=1)
    fencing_token: int = Field(strict=True, ge=0)
    worktree: str | None = None
    patch: PatchBody


class WriteIn(Body):
    """``POST /v1/memory/documents/write``."""

    repo: str = Field(min_length=1)
    path: str = Field(min_length=1, max_length=1000)
    expected_revision: int = Field(strict=True, ge=0)
    expected_file_hash: str = Field(min_length=1, max_length=200)
    claim_id: str = Field(min_length=1)
    fencing_token: int = Field(strict=True, ge=0)
    content: str = Field(max_length=mc.MAX_DOC_BYTES)
    worktree: str | None = None


class AppendIn(Body):
    """``POST /v1/memory/append``."""

    repo: str = Field(min_length=1)
    path: str = Field(min_length=1, max_length=1000)
    claim_id: str = Field(min_length=1)
    fencing_token: int = Field(strict=True, ge=0)
    entry: str = Field(min_length=1, max_length=mc.MAX_ENTRY_BYTES)
    worktree: str | None = None


class RenderIn(Body):
    """``POST /v1/memory/render``: one document (``path``) or every generated one."""

    repo: str = Field(min_length=1)
    path: str | None = None
    worktree: str | None = None


class ReconcileIn(Body):
    """``POST /v1/memory/reconcile``."""

    repo: str = Field(min_length=1)
    path: str = Field(min_length=1, max_length=1000)
    decision: str
    reconciliation_id: str | None = None
    region_key: str | None = None
    expected_revision: int | None = Field(default=None, strict=True)
    worktree: str | None = None


def router(service: Service) -> APIRouter:
    r = APIRouter(tags=["memory"])

    @r.post("/v1/memory/documents", status_code=201)
    def register(body: RegisterIn) -> dict[str, Any]:
        """Register a memory document: path and class (generated, append_only,
        section_owned, private). ``409 revision_conflict`` if already registered."""
        view = service.register_document(mc.Register(body.repo, body.path, body.doc_class))
        return {"document": view.to_wire()}

    @r.get("/v1/memory/documents")
    def list_documents(repo: str, path: str | None = None) -> dict[str, Any]:
        """Registered documents with sections (key, title, revision, hash, ownerClaimId)
        and ``onDisk {fileHash, inSync}``."""
        return {"documents": [v.to_wire() for v in service.list_documents(repo, path)]}

    @r.post("/v1/memory/sections/patch")
    def patch_section(body: SectionPatchIn) -> dict[str, Any]:
        """Patch one section; only that section's bytes change."""
        view = service.patch_section(
            mc.PatchSection(
                repo=body.repo,
                path=body.path,
                section_key=body.section_key,
                expected_section_revision=body.expected_section_revision,
                expected_file_hash=body.expected_file_hash,
                claim_id=body.claim_id,
                fencing_token=body.fencing_token,
                body=body.patch.body,
                diff=body.patch.diff,
                worktree=body.worktree,
            )
        )
        return {
            "document": view.to_wire(),
            "section": view.section(body.section_key),
            "merged": bool(view.details.get("merged")),
        }

    @r.post("/v1/memory/documents/write")
    def write_document(body: WriteIn) -> dict[str, Any]:
        """Replace a whole file; a stale write names the sections it would destroy."""
        view = service.write_document(
            mc.WriteFile(
                repo=body.repo,
                path=body.path,
                expected_revision=body.expected_revision,
                expected_file_hash=body.expected_file_hash,
                claim_id=body.claim_id,
                fencing_token=body.fencing_token,
                content=body.content,
                worktree=body.worktree,
            )
        )
        return {"document": view.to_wire()}

    @r.post("/v1/memory/append")
    def append(body: AppendIn) -> dict[str, Any]:
        """Append an entry to an append-only document (serialized, never interleaved)."""
        view = service.append_entry(
            mc.Append(
                repo=body.repo,
                path=body.path,
                claim_id=body.claim_id,
                fencing_token=body.fencing_token,
                entry=body.entry,
                worktree=body.worktree,
            )
        )
        return {"document": view.to_wire(), "entry": view.details.get("entry")}

    @r.post("/v1/memory/render")
    def render(body: RenderIn) -> dict[str, Any]:
        """Re-render generated regions; user edits stay and open reconciliations."""
        return {"results": service.render(mc.Render(body.repo, body.path, body.worktree))}

    @r.post("/v1/memory/reconcile")
    def reconcile(body: ReconcileIn) -> dict[str, Any]:
        """Resolve a reconciliation: ``upstream`` or ``overlay``; region re-rendered."""
        view = service.reconcile(
            mc.Reconcile(
                repo=body.repo,
                path=body.path,
                decision=body.decision,
                reconciliation_id=body.reconciliation_id,
                region_key=body.region_key,
                expected_revision=body.expected_revision,
                worktree=body.worktree,
            )
        )
        return {"document": view.to_wire()}

    return r
