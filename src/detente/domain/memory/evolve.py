"""Folding ``memory.*`` events into ``RepoState.memory`` (a :class:`MemoryRegistry`).

Content events (``registered``, ``section_patched``, ``written``, ``appended``,
``rendered``, ``reconciliation_resolved``) carry what they saw of the file
(``fileHash``, ``size``, ``sections[]``, ``regions[]``, see
:func:`~detente.domain.memory.model.outline_to_wire`); a section's revision increases
when its hash changes, and ``writtenSections`` name the sections whose last writer
(claim and fencing token) the event sets.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from detente.domain import events as ev
from detente.domain.memory.model import (
    Artifact,
    DocClass,
    MemoryDocument,
    MemoryRegistry,
    Reconciliation,
    RegionRecord,
    SectionRecord,
)

if TYPE_CHECKING:
    from detente.domain.state import RepoState

__all__ = ["MemoryRegistry", "apply_memory_event"]


def apply_memory_event(
    state: RepoState, event_type: str, data: dict[str, Any], at: datetime, event_id: str
) -> None:
    """Fold one ``memory.*`` event (unknown types are ignored)."""
    registry: MemoryRegistry = state.memory
    doc_id = str(data["documentId"])
    if event_type == ev.MEMORY_REGISTERED:
        registry.put(
            MemoryDocument(
                id=doc_id,
                repo=state.repo,
                path=str(data["path"]),
                doc_class=DocClass(data["class"]),
                revision=1,
                file_hash=data.get("fileHash"),
                size=int(data.get("size", 0)),
                sections=_sections((), data, {}),
                regions=_regions((), data),
                created_at=at,
                updated_at=at,
                last_event_id=event_id,
                principal=_registrant(data.get("actor")),
            )
        )
        return
    old = registry.documents.get(doc_id)
    if old is None:
        return
    new = _evolve(old, event_type, data, at)
    registry.put(replace(new, revision=old.revision + 1, updated_at=at, last_event_id=event_id))


def _registrant(actor: Any) -> str:
    principal = actor.get("principal") if isinstance(actor, dict) else None
    return principal if isinstance(principal, str) else "local"


def _evolve(
    doc: MemoryDocument, event_type: str, data: dict[str, Any], at: datetime
) -> MemoryDocument:
    if "fileHash" in data:
        writer = {
            str(k): (str(data["claimId"]), int(data["fencingToken"]))
            for k in data.get("writtenSections", ())
        }
        doc = replace(doc, file_hash=data["fileHash"], size=int(data["size"]))
        if "sections" in data:
            doc = replace(doc, sections=_sections(doc.sections, data, writer))
        if "regions" in data:
            doc = replace(doc, regions=_regions(doc.regions, data))
    if event_type == ev.MEMORY_RECONCILIATION_OPENED:
        opened = Reconciliation(
            id=str(data["reconciliationId"]),
            region_key=str(data["regionKey"]),
            status="open",
            recorded_hash=str(data["recordedHash"]),
            disk_hash=str(data["diskHash"]),
            diff=str(data["diff"]),
            opened_at=at,
        )
        doc = replace(doc, reconciliations=(*doc.reconciliations, opened))
    elif event_type == ev.MEMORY_RECONCILIATION_RESOLVED:
        doc = replace(
            doc,
            reconciliations=tuple(
                replace(
                    r,
                    status="resolved",
                    decision=str(data["decision"]),
                    user_content=data.get("userContent"),
                    resolved_at=at,
                )
                if r.id == data["reconciliationId"]
                else r
                for r in doc.reconciliations
            ),
        )
    elif event_type == ev.MEMORY_PATCH_DEFERRED:
        artifact = Artifact(
            id=str(data["artifactId"]),
            section_key=str(data["sectionKey"]),
            claim_id=str(data["claimId"]),
            fencing_token=int(data["fencingToken"]),
            reason=str(data["reason"]),
            diff=str(data["diff"]),
            meeting_id=data.get("meetingId"),
            created_at=at,
        )
        doc = replace(doc, artifacts=(*doc.artifacts, artifact))
    return doc


def _sections(
    old: tuple[SectionRecord, ...], data: dict[str, Any], writer: dict[str, tuple[str, int]]
) -> tuple[SectionRecord, ...]:
    before = {s.key: s for s in old}
    out: list[SectionRecord] = []
    for raw in data.get("sections", ()):
        key = str(raw["key"])
        prev = before.get(key)
        revision = 1 if prev is None else prev.revision + (prev.hash != raw["hash"])
        claim, token = writer.get(
            key, (prev.last_writer, prev.fencing_token) if prev else (None, 0)
        )
        out.append(
            SectionRecord(
                key=key,
                title=str(raw["title"]),
                kind=str(raw["kind"]),
                level=int(raw["level"]),
                parent=raw.get("parent"),
                revision=revision,
                hash=str(raw["hash"]),
                fencing_token=token,
                last_writer=claim,
            )
        )
    return tuple(out)


def _regions(old: tuple[RegionRecord, ...], data: dict[str, Any]) -> tuple[RegionRecord, ...]:
    before = {r.key: r for r in old}
    out: list[RegionRecord] = []
    for raw in data.get("regions", ()):
        prev = before.get(str(raw["key"]))
        revision = 1 if prev is None else prev.revision + (prev.hash != raw["hash"])
        out.append(RegionRecord(key=str(raw["key"]), revision=revision, hash=str(raw["hash"])))
    return tuple(out)
