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

from detente.api.routes.operations import declare
from detente.client import routes as op
from detente.client.calls import ServiceCalls


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter(tags=["memory"])
    declare(
        r,
        calls,
        op.REGISTER_DOCUMENT,
        op.LIST_DOCUMENTS,
        op.PATCH_SECTION,
        op.WRITE_DOCUMENT,
        op.APPEND_ENTRY,
        op.RENDER,
        op.RECONCILE,
    )
    return r
