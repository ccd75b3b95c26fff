"""The checks every memory decision starts with: the document exists, has the right class
and size; plus the event and conflict shapes they share.
"""

from __future__ import annotations

from typing import Any

from detente.domain import events as ev
from detente.domain.claims.model import Claim
from detente.domain.memory.commands import MAX_DOC_BYTES
from detente.domain.memory.model import DocClass, MemoryDocument, document_to_wire
from detente.domain.overlap.paths import normalize_path
from detente.domain.policy import IdSource
from detente.domain.state import RepoState
from detente.domain.validation import found
from detente.errors import ForbiddenError, NotFoundError, RevisionConflict, ValidationError


def doc_path(state: RepoState, raw: str) -> str:
    """The canonical repo-relative path of a document (``validation_error`` if bad)."""
    return normalize_path(raw, case_insensitive=state.case_insensitive, field="path")


def get_document(state: RepoState, raw_path: str) -> MemoryDocument:
    """The registered document at ``raw_path``, or ``not_found``."""
    path = doc_path(state, raw_path)
    detail = f"{path} is not a registered memory document of {state.repo!r}"
    return found(state.memory.get(path), detail, path=path)


_REFUSALS = {
    DocClass.PRIVATE: "private documents are the agent's own scratchpad: detente never "
    "coordinates them (write the file directly)",
    DocClass.GENERATED: "generated documents are rendered from the event log: edit the text "
    "outside the markers by hand, or reconcile an edited region",
    DocClass.APPEND_ONLY: "append-only documents accept appends only (POST /v1/memory/append)",
    DocClass.SECTION_OWNED: "section-owned documents change through section patches",
}


def require_class(doc: MemoryDocument, *allowed: DocClass) -> None:
    """``forbidden`` unless the document's class allows the operation."""
    if doc.doc_class not in allowed:
        raise ForbiddenError(
            f"{doc.path} is {doc.doc_class.value}: {_REFUSALS[doc.doc_class]}",
            path=doc.path,
            documentClass=doc.doc_class.value,
        )


def check_size(data: bytes, fld: str) -> None:
    if len(data) > MAX_DOC_BYTES:
        raise ValidationError(
            f"{fld} is {len(data)} bytes; memory documents are limited to {MAX_DOC_BYTES}",
            field=fld,
        )


def memory_event(ids: IdSource, doc_id: str, event_type: str, **data: Any) -> ev.Event:
    """An event on the document's stream ``memory/<doc_id>``."""
    return ev.stream_event(ids, ev.memory_subject(doc_id), event_type, documentId=doc_id, **data)


def written_event(
    ids: IdSource, doc_id: str, claim: Claim, event_type: str, **data: Any
) -> ev.Event:
    """A write by ``claim`` on the document's stream: ``data`` plus the writer's
    ``claimId`` and ``fencingToken``."""
    return memory_event(
        ids, doc_id, event_type, claimId=claim.id, fencingToken=claim.fencing_token, **data
    )


def current(doc: MemoryDocument) -> dict[str, Any]:
    return document_to_wire(doc)


def missing_file(doc: MemoryDocument) -> NotFoundError:
    """``not_found``: the registered document's file is not in the working tree."""
    return NotFoundError(f"{doc.path} does not exist in the working tree", path=doc.path)


def stale_document(
    doc: MemoryDocument, detail: str, expected: int | str, actual: int | str
) -> RevisionConflict:
    """``revision_conflict`` carrying the current document and the event that made it."""
    return RevisionConflict(
        detail,
        expected=expected,
        actual=actual,
        current=current(doc),
        event_ids=[doc.last_event_id] if doc.last_event_id else [],
    )
