"""The memory document operations: register, list, patch a section, write a whole file,
append an entry, render generated regions, reconcile."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from detente.operations import authorize as who
from detente.operations.declaration import Operation

if TYPE_CHECKING:
    from detente.operations import memory_bodies as mb
    from detente.operations import wire
    from detente.service import Service

__all__ = ["OPERATIONS"]


def register_document(service: Service, body: mb.RegisterIn) -> wire.DocumentOut:
    """Register a memory document: path and class (generated, append_only,
    section_owned, private). ``409 revision_conflict`` if already registered."""
    view = service.memory.register_document(body.to_command())
    return {"document": cast("wire.Document", view.to_wire())}


def list_documents(
    service: Service, repo: str, path: str | None = None, text: bool = False
) -> wire.DocumentList:
    """Registered documents with sections (key, title, revision, hash, ownerClaimId),
    ``onDisk {fileHash, inSync, ref, commit}`` (the authoritative copy: the integration
    branch's), ``checkouts[{worktree, state, fileHash}]`` (current, behind or edited)
    and, with ``text``, the authoritative text."""
    views = service.memory.list_documents(repo, path, text=text)
    return {"documents": [cast("wire.Document", v.to_wire()) for v in views]}


def patch_section(service: Service, body: mb.SectionPatchIn) -> wire.SectionPatchOut:
    """Patch one section; only that section's bytes change."""
    view = service.memory.patch_section(body.to_command())
    return {
        "document": cast("wire.Document", view.to_wire()),
        "section": cast("wire.Section", view.section(body.section_key)),
        "merged": bool(view.details.get("merged")),
    }


def write_document(service: Service, body: mb.WriteIn) -> wire.DocumentOut:
    """Replace a whole file; a stale write names the sections it would destroy."""
    view = service.memory.write_document(body.to_command())
    return {"document": cast("wire.Document", view.to_wire())}


def append_entry(service: Service, body: mb.AppendIn) -> wire.AppendOut:
    """Append an entry to an append-only document (serialized, never interleaved)."""
    view = service.memory.append_entry(body.to_command())
    return {
        "document": cast("wire.Document", view.to_wire()),
        "entry": cast("wire.Entry", view.details["entry"]),
    }


def render(service: Service, body: mb.RenderIn) -> wire.RenderOut:
    """Re-render generated regions; user edits stay and open reconciliations."""
    results = service.memory.render(body.to_command())
    return {"results": cast("list[wire.RenderResult]", results)}


def reconcile(service: Service, body: mb.ReconcileIn) -> wire.DocumentOut:
    """Resolve a reconciliation: ``upstream`` or ``overlay``; region re-rendered."""
    view = service.memory.reconcile(body.to_command())
    return {"document": cast("wire.Document", view.to_wire())}


_WRITE = (
    "revision_conflict",
    "stale_fencing_token",
    "overlap_blocking",
    "lease_expired",
    "invalid_transition",
)
_TAGS = ("memory",)

REGISTER_DOCUMENT: Operation[wire.DocumentOut] = Operation(
    "register_document",
    "POST",
    "/v1/memory/documents",
    register_document,
    rule=who.role("claim"),
    conflicts=("revision_conflict",),
    status_code=201,
    tags=_TAGS,
)
LIST_DOCUMENTS: Operation[wire.DocumentList] = Operation(
    "list_documents", "GET", "/v1/memory/documents", list_documents, tags=_TAGS
)
PATCH_SECTION: Operation[wire.SectionPatchOut] = Operation(
    "patch_section",
    "POST",
    "/v1/memory/sections/patch",
    patch_section,
    rule=who.own_body_claim,
    conflicts=_WRITE,
    refuses=True,
    tags=_TAGS,
)
WRITE_DOCUMENT: Operation[wire.DocumentOut] = Operation(
    "write_document",
    "POST",
    "/v1/memory/documents/write",
    write_document,
    rule=who.own_body_claim,
    conflicts=_WRITE,
    refuses=True,
    tags=_TAGS,
)
APPEND_ENTRY: Operation[wire.AppendOut] = Operation(
    "append_entry",
    "POST",
    "/v1/memory/append",
    append_entry,
    rule=who.own_body_claim,
    conflicts=_WRITE,
    refuses=True,
    tags=_TAGS,
)
RENDER: Operation[wire.RenderOut] = Operation(
    "render",
    "POST",
    "/v1/memory/render",
    render,
    rule=who.role("claim"),
    conflicts=("revision_conflict",),
    tags=_TAGS,
)
RECONCILE: Operation[wire.DocumentOut] = Operation(
    "reconcile",
    "POST",
    "/v1/memory/reconcile",
    reconcile,
    rule=who.role("claim"),
    conflicts=("revision_conflict", "invalid_transition"),
    refuses=True,
    tags=_TAGS,
)

#: In the order the HTTP API registers them.
OPERATIONS: tuple[Operation[Any], ...] = (
    REGISTER_DOCUMENT,
    LIST_DOCUMENTS,
    PATCH_SECTION,
    WRITE_DOCUMENT,
    APPEND_ENTRY,
    RENDER,
    RECONCILE,
)
