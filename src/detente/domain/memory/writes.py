"""Deciding writes: whole-file writes and appends (pure).

**Whole-file write.** Stale (``expectedRevision`` or ``expectedFileHash`` not current):
``409 revision_conflict`` naming the sections the write would delete or change that its
writer does not own. Fresh: every changed section must be the writer's
(:func:`check_writer`). Append-only documents accept only writes that keep every
existing byte (``forbidden`` otherwise).

**Append.** Any live, active claim may append an entry; existing bytes never change.

Section patches: :mod:`detente.domain.memory.patching`.
"""

from __future__ import annotations

from datetime import datetime

from detente.domain import events as ev
from detente.domain.claims.model import Claim
from detente.domain.memory.authority import check_writer, covers, owners, section_scope
from detente.domain.memory.commands import (
    MAX_ENTRY_BYTES,
    Append,
    Outcome,
    WriteFile,
)
from detente.domain.memory.edits import (
    append_entry,
    compare_sections,
)
from detente.domain.memory.guards import (
    check_size,
    get_document,
    missing_file,
    require_class,
    stale_document,
    written_event,
)
from detente.domain.memory.markdown import Outline, digest, parse
from detente.domain.memory.model import DocClass, MemoryDocument, outline_to_wire
from detente.domain.memory.text_style import encode_like
from detente.domain.policy import IdSource
from detente.domain.state import RepoState
from detente.errors import (
    ForbiddenError,
    ValidationError,
)

__all__ = ["decide_append", "decide_write"]


def decide_write(
    state: RepoState, cmd: WriteFile, disk: bytes | None, now: datetime, ids: IdSource
) -> Outcome:
    """Decide a whole-file write (see the module docstring).

    Raises:
        NotFoundError, ForbiddenError, LeaseExpired, OverlapBlocking, InvalidTransition,
        StaleFencingToken, RevisionConflict (``sections`` lists what a stale write would
        delete or change that its writer does not own), ValidationError.
    """
    doc = get_document(state, cmd.path)
    require_class(doc, DocClass.SECTION_OWNED, DocClass.APPEND_ONLY)
    claim = check_writer(state, doc, cmd.claim_id, cmd.fencing_token, [], now)
    if disk is None:
        disk = b"" if doc.doc_class is DocClass.APPEND_ONLY else None
    if disk is None:
        raise missing_file(doc)
    new = cmd.content.encode("utf-8")
    check_size(new, "content")
    keys: list[str | None] = []
    if doc.doc_class is DocClass.APPEND_ONLY:
        if not new.startswith(disk):
            raise ForbiddenError(
                f"{doc.path} is append-only: this write changes or removes existing bytes "
                f"(the first {len(disk)} bytes must stay as they are)",
                path=doc.path,
            )
        before = after = Outline((), ())
    else:
        before, after = parse(disk, path=doc.path), parse(new, path=doc.path)
    changes = compare_sections(before, disk, after, new)
    stale = cmd.expected_revision != doc.revision or cmd.expected_file_hash != digest(disk)
    if stale:
        not_owned = [k for k in changes.touched if not _owns(state, doc, claim, k)]
        lost = "; ".join(f"{'delete' if k in changes.deleted else 'change'} {k}" for k in not_owned)
        conflict = stale_document(
            doc,
            f"stale write refused: {doc.path} is at revision {doc.revision} (file hash "
            f"{digest(disk)[:12]}), not {cmd.expected_revision} ({cmd.expected_file_hash[:12]})"
            + (f"; it would {lost}, which claim {claim.id} does not own" if lost else "")
            + ": re-read the file and patch your sections",
            *(
                (cmd.expected_revision, doc.revision)
                if cmd.expected_revision != doc.revision
                else (cmd.expected_file_hash, digest(disk))
            ),
        )
        conflict.extra["sections"] = not_owned
        raise conflict
    if doc.doc_class is DocClass.SECTION_OWNED:
        keys = [*changes.touched, *changes.added]
        check_writer(state, doc, claim.id, cmd.fencing_token, keys, now)
    if new == disk:
        return Outcome()
    content = (
        outline_to_wire(after, new)
        if doc.doc_class is DocClass.SECTION_OWNED
        else {"fileHash": digest(new), "size": len(new)}
    )
    event = written_event(
        ids,
        doc.id,
        claim,
        ev.MEMORY_WRITTEN,
        writtenSections=[k for k in keys if k is not None and k not in changes.deleted],
        worktree=cmd.worktree,
        **content,
    )
    return Outcome([event], new)


def _owns(state: RepoState, doc: MemoryDocument, claim: Claim, key: str) -> bool:
    others = [o for o in owners(state, doc, key) if o.id != claim.id and not o.advisory]
    return not others and covers(claim, doc.path, section_scope(doc, key))


def decide_append(
    state: RepoState, cmd: Append, disk: bytes | None, now: datetime, ids: IdSource
) -> Outcome:
    """Append an entry to an append-only document.

    Appends never change existing bytes, so any live, active claim may append (its
    fencing token is checked); the repository's command transaction serializes them.

    Raises:
        NotFoundError, ForbiddenError (not append-only), LeaseExpired, OverlapBlocking,
        InvalidTransition, StaleFencingToken, ValidationError (empty or too large).
    """
    doc = get_document(state, cmd.path)
    require_class(doc, DocClass.APPEND_ONLY)
    claim = check_writer(state, doc, cmd.claim_id, cmd.fencing_token, [], now)
    entry = encode_like(cmd.entry, disk or b"", field="entry")
    if len(entry) > MAX_ENTRY_BYTES:
        raise ValidationError(f"an entry is limited to {MAX_ENTRY_BYTES} bytes", field="entry")
    new, offset = append_entry(disk or b"", entry)
    check_size(new, "entry")
    event = written_event(
        ids,
        doc.id,
        claim,
        ev.MEMORY_APPENDED,
        offset=offset,
        length=len(new) - offset,
        entryHash=digest(new[offset:]),
        worktree=cmd.worktree,
        fileHash=digest(new),
        size=len(new),
    )
    return Outcome([event], new, details={"entry": {"offset": offset, "length": len(new) - offset}})
