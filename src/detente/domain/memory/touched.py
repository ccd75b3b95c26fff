"""What a claim leaves in memory documents: each one it touched, at its current revision.

Recorded when a claim is abandoned (``memoryState``), so a successor (or a human) can
see which documents the claim's work reached and whether they moved since.
"""

from __future__ import annotations

from typing import Any

from detente.domain.claims.model import Claim
from detente.domain.memory.model import DocClass, MemoryRegistry
from detente.domain.overlap.globs import matches

__all__ = ["memory_state"]


def memory_state(registry: MemoryRegistry, claim: Claim) -> dict[str, dict[str, Any]]:
    """``{path: {revision, fileHash, sections[]}}`` for every registered, non-private
    document the claim touched: named by its memory impacts or path patterns, or with a
    section it last wrote (``sections`` lists those keys).
    """
    out: dict[str, dict[str, Any]] = {}
    for doc in sorted(registry.documents.values(), key=lambda d: d.path):
        if doc.doc_class is DocClass.PRIVATE:
            continue
        written = [s.key for s in doc.sections if s.last_writer == claim.id]
        named = any(matches(i.path, doc.path) for i in claim.memory_impacts) or any(
            matches(p, doc.path) for p in claim.paths
        )
        if written or named:
            out[doc.path] = {
                "revision": doc.revision,
                "fileHash": doc.file_hash,
                "sections": written,
            }
    return out
