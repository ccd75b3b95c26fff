"""Memory commands, the outcome of deciding one, and the checks they share (pure).

A decision never touches the file: it returns an :class:`Outcome` holding the events to
append and, when the file must change, its complete new bytes. The service writes those
bytes (atomically) before it appends the events, under the repository's command
transaction, and raises ``refusal`` (if any) after committing the events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from detente.domain import events as ev
from detente.domain.memory.model import DocClass, MemoryDocument, document_to_wire
from detente.domain.overlap.paths import normalize_path
from detente.domain.policy import IdSource
from detente.domain.state import RepoState
from detente.errors import DetenteError, ForbiddenError, NotFoundError, ValidationError

__all__ = [
    "MAX_DOC_BYTES",
    "MAX_ENTRY_BYTES",
    "Append",
    "Merge3",
    "Outcome",
    "PatchSection",
    "Reconcile",
    "Register",
    "Render",
    "WriteFile",
    "doc_path",
    "get_document",
    "memory_event",
    "require_class",
]

#: Largest coordinated document (bytes); larger files are refused with validation_error.
MAX_DOC_BYTES = 1 << 20
#: Largest appended entry (bytes).
MAX_ENTRY_BYTES = 1 << 16

Merge3 = Callable[[bytes, bytes, bytes], bytes | None]
"""``(ours, base, theirs) -> merged bytes``, or None when the merge has conflicts."""


@dataclass(frozen=True)
class Register:
    """Register ``path`` as a memory document of class ``doc_class``."""

    repo: str
    path: str
    doc_class: str


@dataclass(frozen=True)
class PatchSection:
    """Replace one section's body (``body``) or apply a unified diff (``diff``) to it."""

    repo: str
    path: str
    section_key: str
    expected_section_revision: int
    expected_file_hash: str
    claim_id: str
    fencing_token: int
    body: str | None = None
    diff: str | None = None
    worktree: str | None = None


@dataclass(frozen=True)
class WriteFile:
    """Replace the whole file (section-owned: only covered sections may change)."""

    repo: str
    path: str
    expected_revision: int
    expected_file_hash: str
    claim_id: str
    fencing_token: int
    content: str
    worktree: str | None = None


@dataclass(frozen=True)
class Append:
    """Append one entry to an append-only document."""

    repo: str
    path: str
    claim_id: str
    fencing_token: int
    entry: str
    worktree: str | None = None


@dataclass(frozen=True)
class Render:
    """Render the generated regions of one document (``path``) or of all of them."""

    repo: str
    path: str | None = None
    worktree: str | None = None


@dataclass(frozen=True)
class Reconcile:
    """Resolve a reconciliation: the user's edit goes ``upstream`` or into an ``overlay``."""

    repo: str
    path: str
    decision: str
    reconciliation_id: str | None = None
    region_key: str | None = None
    expected_revision: int | None = None
    worktree: str | None = None


@dataclass
class Outcome:
    """A decision: events to append, the file's new bytes, an error to raise after commit.

    Attributes:
        events: to append (may be empty).
        data: the complete new file bytes, or None to leave the file alone.
        refusal: raised after the events are committed (a deferred edit is a ``409``
            that still records its patch artifact).
        details: extra response fields (``merged``, ``entry``, ``reconciliations``...).
    """

    events: list[ev.Event] = field(default_factory=list)
    data: bytes | None = None
    refusal: DetenteError | None = None
    details: dict[str, Any] = field(default_factory=dict)


def doc_path(state: RepoState, raw: str) -> str:
    """The canonical repo-relative path of a document (``validation_error`` if bad)."""
    return normalize_path(raw, case_insensitive=state.case_insensitive, field="path")


def get_document(state: RepoState, raw_path: str) -> MemoryDocument:
    """The registered document at ``raw_path``, or ``not_found``."""
    path = doc_path(state, raw_path)
    doc = state.memory.get(path)
    if doc is None:
        raise NotFoundError(
            f"{path} is not a registered memory document of {state.repo!r}", path=path
        )
    return doc


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
    return ev.Event(
        id=ids("evt"),
        type=event_type,
        subject=ev.memory_subject(doc_id),
        data={"documentId": doc_id, **data},
    )


def current(doc: MemoryDocument) -> dict[str, Any]:
    return document_to_wire(doc)
