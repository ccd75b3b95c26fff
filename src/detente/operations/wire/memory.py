"""Memory documents and the answers of the memory operations (API.md "Memory documents")."""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from detente.operations.wire.record import Json, Time, record

__all__ = [
    "AppendOut",
    "Artifact",
    "Checkout",
    "DocClass",
    "Document",
    "DocumentList",
    "DocumentOut",
    "Entry",
    "OnDisk",
    "Reconciliation",
    "Region",
    "RenderOut",
    "RenderResult",
    "Section",
    "SectionPatchOut",
]


@record
class Section(TypedDict):
    """A section of a document; ``key`` is the heading's slug or an explicit marker's key;
    ``ownerClaimId`` the holding claim that declared it (null: nobody)."""

    key: str
    title: str
    kind: str
    level: int
    parent: str | None
    revision: int
    hash: str
    fencingToken: int
    lastWriterClaimId: str | None
    ownerClaimId: NotRequired[str | None]


@record
class Region(TypedDict):
    """A generated region (``detente:generated`` markers)."""

    key: str
    revision: int
    hash: str


@record
class Reconciliation(TypedDict):
    """A user's edit of a generated region, waiting for ``upstream`` or ``overlay``."""

    id: str
    regionKey: str
    status: str
    options: list[str]
    recordedHash: str
    diskHash: str
    diff: str
    openedAt: Time
    decision: str | None
    userContent: str | None
    resolvedAt: Time | None


@record
class Artifact(TypedDict):
    """An agent's deferred edit, kept as a patch (nothing acknowledged is lost)."""

    id: str
    sectionKey: str
    claimId: str
    fencingToken: int
    reason: str
    diff: str
    meetingId: str | None
    createdAt: Time


@record
class OnDisk(TypedDict):
    """The authoritative copy now (the file in the tip of the integration branch): its
    SHA-256, whether it matches the record, the branch and the commit it was read at."""

    fileHash: str | None
    inSync: bool
    ref: NotRequired[str]
    commit: NotRequired[str | None]


@record
class Checkout(TypedDict):
    """The document in a checkout of the integration branch: ``current`` (the branch's
    version), ``behind`` (clean but older: it did not follow) or ``edited`` (a person's
    edit there, adopted at the next write when it merges)."""

    worktree: str
    state: Literal["current", "behind", "edited"]
    fileHash: str | None


#: How detente coordinates a document.
DocClass = Literal["generated", "append_only", "section_owned", "private"]

# ``class`` is a Python keyword: the functional form spells it.
Document = TypedDict(
    "Document",
    {
        "id": str,
        "repo": str,
        "path": str,
        "class": DocClass,
        "revision": int,
        "fileHash": str | None,
        "size": int,
        "sections": list[Section],
        "regions": list[Region],
        "reconciliations": list[Reconciliation],
        "artifacts": list[Artifact],
        "createdAt": Time,
        "updatedAt": Time,
        "lastEventId": str | None,
        "onDisk": NotRequired[OnDisk | None],
        "checkouts": NotRequired[list[Checkout]],
        "text": NotRequired[str],
    },
)
Document.__doc__ = "A memory document record; ``onDisk`` (the file now) is null if ``private``."
record(Document)


@record
class DocumentOut(TypedDict):
    """``{document}``."""

    document: Document


@record
class DocumentList(TypedDict):
    """``{documents[]}``."""

    documents: list[Document]


@record
class SectionPatchOut(TypedDict):
    """``{document, section, merged}``: ``merged`` when a concurrent edit of another part
    of the file was merged in."""

    document: Document
    section: Section
    merged: bool


@record
class Entry(TypedDict):
    """Where an appended entry landed: byte ``offset`` and ``length``."""

    offset: int
    length: int


@record
class AppendOut(TypedDict):
    """``{document, entry}``."""

    document: Document
    entry: Entry


@record
class RenderResult(TypedDict):
    """One document's rendering: ``{path, document, rendered[], kept[], reconciliations[]}``
    or ``{path, error}`` (a problem object) when it failed."""

    path: str
    document: NotRequired[Document]
    rendered: NotRequired[list[str]]
    kept: NotRequired[list[str]]
    reconciliations: NotRequired[list[Json]]
    error: NotRequired[dict[str, Json]]


@record
class RenderOut(TypedDict):
    """``{results[]}``."""

    results: list[RenderResult]
