"""The memory document record (API.md "Memory documents") and its camelCase wire shape.

A document is the projection of its stream ``memory/<documentId>``: the class, the last
recorded file hash and size, and per section its revision, hash and last writer. The
revision of a section counts the recorded versions of its bytes: it increases whenever a
recorded event sees the section's hash change, whoever changed it (a patch, a user's
edit merged by a later write, an edit of a nested section). Owners are not stored here:
they follow from the holding claims' ``memoryImpacts`` (:mod:`.authority`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from detente.clock import format_time

if TYPE_CHECKING:
    from detente.domain.memory.markdown import Outline

__all__ = [
    "Artifact",
    "DocClass",
    "MemoryDocument",
    "MemoryRegistry",
    "Reconciliation",
    "RegionRecord",
    "SectionRecord",
    "document_to_wire",
    "outline_to_wire",
]


class DocClass(StrEnum):
    """How detente coordinates a document."""

    GENERATED = "generated"
    APPEND_ONLY = "append_only"
    SECTION_OWNED = "section_owned"
    PRIVATE = "private"


@dataclass(frozen=True)
class SectionRecord:
    """One section as recorded. ``fencing_token`` is the last writer's token (0: none)."""

    key: str
    title: str
    kind: str
    level: int
    parent: str | None
    revision: int
    hash: str
    fencing_token: int = 0
    last_writer: str | None = None


@dataclass(frozen=True)
class RegionRecord:
    """A generated region: the hash of its body as detente last rendered or saw it."""

    key: str
    revision: int
    hash: str


@dataclass(frozen=True)
class Reconciliation:
    """A user's edit found inside a generated region: upstream, or a manual overlay?"""

    id: str
    region_key: str
    status: str
    recorded_hash: str
    disk_hash: str
    diff: str
    opened_at: datetime
    decision: str | None = None
    user_content: str | None = None
    resolved_at: datetime | None = None


@dataclass(frozen=True)
class Artifact:
    """An agent's refused section edit, kept as a unified diff against the file on disk."""

    id: str
    section_key: str
    claim_id: str
    fencing_token: int
    reason: str
    diff: str
    meeting_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class MemoryDocument:
    """A registered memory document (private documents record no content)."""

    id: str
    repo: str
    path: str
    doc_class: DocClass
    revision: int
    file_hash: str | None
    size: int
    sections: tuple[SectionRecord, ...]
    regions: tuple[RegionRecord, ...]
    created_at: datetime
    updated_at: datetime
    last_event_id: str | None = None
    reconciliations: tuple[Reconciliation, ...] = ()
    artifacts: tuple[Artifact, ...] = ()
    #: The principal that registered the document (the event's actor): a ``private``
    #: document is listed to it (and admins) only.
    principal: str = "local"

    def section(self, key: str) -> SectionRecord | None:
        return next((s for s in self.sections if s.key == key), None)

    def region(self, key: str) -> RegionRecord | None:
        return next((r for r in self.regions if r.key == key), None)

    def open_reconciliation(self, region_key: str) -> Reconciliation | None:
        return next(
            (r for r in self.reconciliations if r.region_key == region_key and r.status == "open"),
            None,
        )


@dataclass
class MemoryRegistry:
    """The registered documents of one repository, by id and by path."""

    documents: dict[str, MemoryDocument] = field(default_factory=dict)
    by_path: dict[str, str] = field(default_factory=dict)
    private: frozenset[str] = frozenset()

    def get(self, path: str) -> MemoryDocument | None:
        doc_id = self.by_path.get(path)
        return self.documents.get(doc_id) if doc_id is not None else None

    def put(self, doc: MemoryDocument) -> None:
        self.documents[doc.id] = doc
        self.by_path[doc.path] = doc.id
        if doc.doc_class is DocClass.PRIVATE:
            self.private = self.private | {doc.path}
        else:
            self.private = self.private - {doc.path}

    def private_paths(self) -> frozenset[str]:
        """Paths of private documents, which overlap analysis ignores (kept up to date by
        :meth:`put`: overlap analysis asks on every claim open)."""
        return self.private


def outline_to_wire(outline: Outline, data: bytes) -> dict[str, Any]:
    """What a content event records of a file: hash, size, sections and regions."""
    # The Markdown parser's module loads when a document is written (a read of claims,
    # which restores every registry, never needs it).
    from detente.domain.memory.markdown import digest

    return {
        "fileHash": digest(data),
        "size": len(data),
        "sections": [
            {
                "key": s.key,
                "title": s.title,
                "kind": s.kind,
                "level": s.level,
                "parent": s.parent,
                "hash": digest(s.text(data)),
            }
            for s in outline.sections
        ],
        "regions": [{"key": r.key, "hash": digest(r.body(data))} for r in outline.regions],
    }


def _time(value: datetime | None) -> str | None:
    return format_time(value) if value is not None else None


def document_to_wire(doc: MemoryDocument) -> dict[str, Any]:
    """The stored record: ``{id, repo, path, class, revision, fileHash, sections[], ...}``."""
    return {
        "id": doc.id,
        "repo": doc.repo,
        "path": doc.path,
        "class": doc.doc_class.value,
        "revision": doc.revision,
        "fileHash": doc.file_hash,
        "size": doc.size,
        "sections": [
            {
                "key": s.key,
                "title": s.title,
                "kind": s.kind,
                "level": s.level,
                "parent": s.parent,
                "revision": s.revision,
                "hash": s.hash,
                "fencingToken": s.fencing_token,
                "lastWriterClaimId": s.last_writer,
            }
            for s in doc.sections
        ],
        "regions": [{"key": r.key, "revision": r.revision, "hash": r.hash} for r in doc.regions],
        "reconciliations": [
            {
                "id": r.id,
                "regionKey": r.region_key,
                "status": r.status,
                "options": ["upstream", "overlay"],
                "recordedHash": r.recorded_hash,
                "diskHash": r.disk_hash,
                "diff": r.diff,
                "openedAt": format_time(r.opened_at),
                "decision": r.decision,
                "userContent": r.user_content,
                "resolvedAt": _time(r.resolved_at),
            }
            for r in doc.reconciliations
        ],
        "artifacts": [
            {
                "id": a.id,
                "sectionKey": a.section_key,
                "claimId": a.claim_id,
                "fencingToken": a.fencing_token,
                "reason": a.reason,
                "diff": a.diff,
                "meetingId": a.meeting_id,
                "createdAt": format_time(a.created_at),
            }
            for a in doc.artifacts
        ],
        "createdAt": format_time(doc.created_at),
        "updatedAt": format_time(doc.updated_at),
        "lastEventId": doc.last_event_id,
    }
