"""The memory document record as a read answers it (API.md "Memory documents")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from detente.domain.memory.model import DocClass, MemoryDocument, document_to_wire
from detente.errors import NotFoundError

__all__ = ["DocumentView"]


@dataclass(frozen=True)
class DocumentView:
    """A document record with what is derived at read time.

    Attributes:
        document: the recorded document.
        owners: section key -> owner claim id (from the holding claims' memory impacts).
        disk_hash: SHA-256 of the authoritative copy (the integration branch's) now
            (None: missing, private).
        details: extra response fields of the command that produced the view.
        branch: ``{ref, commit}`` the copy was read at (``commit`` None in a write's answer:
            its commit is made after the answer is built; None: not read).
        checkouts: the copies in the branch's checkouts (``memory show`` only).
        text: the authoritative text, when asked for (``memory read``).
    """

    document: MemoryDocument
    owners: dict[str, str | None]
    disk_hash: str | None
    details: dict[str, Any] = field(default_factory=dict)
    branch: dict[str, Any] | None = None
    checkouts: tuple[dict[str, Any], ...] | None = None
    text: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """The API record: the stored record plus ``ownerClaimId`` per section, ``onDisk``
        (the authoritative copy: ``{fileHash, inSync, ref, commit}``), ``checkouts`` and
        ``text`` when read."""
        wire = document_to_wire(self.document)
        for section in wire["sections"]:
            section["ownerClaimId"] = self.owners.get(section["key"])
        wire["onDisk"] = (
            None
            if self.document.doc_class is DocClass.PRIVATE
            else {
                "fileHash": self.disk_hash,
                "inSync": self.disk_hash == self.document.file_hash,
                **(self.branch or {}),
            }
        )
        if self.checkouts is not None:
            wire["checkouts"] = [dict(c) for c in self.checkouts]
        if self.text is not None:
            wire["text"] = self.text
        return wire

    def section(self, key: str) -> dict[str, Any]:
        """One section of :meth:`to_wire` (``not_found`` if absent)."""
        for section in self.to_wire()["sections"]:
            if section["key"] == key:
                return dict(section)
        raise NotFoundError(f"no section {key!r} in {self.document.path}", sectionKey=key)
