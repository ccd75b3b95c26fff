"""A human's version of a registered document becomes the recorded one (pure).

The authoritative copy of a document is the blob at its path on the integration branch.
When that copy's hash is not the recorded one (a human committed an edit on the branch),
or a checkout of the branch holds a human's edit of it, the service hands the new bytes
here before any write is decided: the result is one ``memory.adopted`` event recording
what the file holds now. A section whose bytes changed gets a new revision (an agent
that patches it on the revision it read before gets ``409 revision_conflict``: the human
won by compare-and-swap); nothing is overwritten. In a generated document the regions
keep their recorded hashes, so the next render finds the edit and opens a
reconciliation instead of re-rendering over it.
"""

from __future__ import annotations

from detente.domain import events as ev
from detente.domain.memory.guards import memory_event
from detente.domain.memory.markdown import digest, parse
from detente.domain.memory.model import DocClass, MemoryDocument, outline_to_wire
from detente.domain.policy import IdSource
from detente.errors import ValidationError

__all__ = ["decide_adopt"]


def decide_adopt(doc: MemoryDocument, data: bytes, source: str, ids: IdSource) -> list[ev.Event]:
    """The events that make ``data`` the recorded version of ``doc``.

    Args:
        doc: the registered document.
        data: the bytes a human left (on the branch, or in a checkout).
        source: where they were found (``branch`` or ``checkout <path>``), recorded.
        ids: id source.

    Returns:
        ``[memory.adopted]``, or nothing (a private document, the bytes already
        recorded, or a file whose markers no longer parse: it is left for a human).
    """
    if doc.doc_class is DocClass.PRIVATE or digest(data) == doc.file_hash:
        return []
    if doc.doc_class is DocClass.APPEND_ONLY:
        content: dict[str, object] = {"fileHash": digest(data), "size": len(data)}
    else:
        try:
            content = dict(outline_to_wire(parse(data, path=doc.path), data))
        except ValidationError:
            return []
        if doc.doc_class is DocClass.GENERATED:
            del content["regions"]  # an edited region opens a reconciliation at render
    return [memory_event(ids, doc.id, ev.MEMORY_ADOPTED, source=source, **content)]
