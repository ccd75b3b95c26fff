"""Deciding a section patch (pure).

After :func:`~detente.domain.memory.authority.check_writer` and the
``expectedSectionRevision`` check (``revision_conflict`` with the current document), the
agent's edit is computed against its *base*: the file on disk when ``expectedFileHash``
is its hash, else the snapshot detente kept of that version (``base``), else the disk
itself provided the section still has its recorded hash. Then, as ``git merge-file``
would (three-way merge, base = what the agent read):

- the section on disk is still the base's: only that section's bytes are replaced; every
  other byte on disk (other agents' and users' edits included) is kept;
- the section changed on disk since the base (a user's edit): ``merge3`` merges; a clean
  merge that stays inside the section is written;
- otherwise the user's content stays, the agent's edit is recorded as a patch artifact
  (``memory.patch_deferred``, a unified diff against the file on disk), the claim
  re-enters negotiation in a new meeting, and the caller gets ``409 revision_conflict``.

Whole-file writes and appends: :mod:`detente.domain.memory.writes`.
"""

from __future__ import annotations

from datetime import datetime

from detente.domain import events as ev
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.claims.transitions import require
from detente.domain.memory.authority import check_writer, owners
from detente.domain.memory.commands import (
    Merge3,
    Outcome,
    PatchSection,
)
from detente.domain.memory.edits import (
    apply_unified_diff,
    check_confined,
    section_text_with_body,
    splice,
    unified_diff,
)
from detente.domain.memory.guards import (
    check_size,
    current,
    get_document,
    missing_file,
    require_class,
    stale_document,
    written_event,
)
from detente.domain.memory.markdown import Outline, digest, parse
from detente.domain.memory.model import DocClass, MemoryDocument, outline_to_wire
from detente.domain.memory.text_style import encode_like
from detente.domain.policy import IdSource, Policy
from detente.domain.state import RepoState
from detente.domain.validation import section_key
from detente.errors import (
    NotFoundError,
    OverlapBlocking,
    RevisionConflict,
    ValidationError,
)

__all__ = ["decide_patch"]


def _proposal(cmd: PatchSection, source: bytes, outline: Outline, path: str) -> bytes:
    """The agent's new bytes of the whole section, computed on ``source``."""
    span = outline.section(cmd.section_key)
    if span is None:
        raise ValidationError(f"the base has no section {cmd.section_key!r}", field="sectionKey")
    if (cmd.body is None) == (cmd.diff is None):
        raise ValidationError("patch needs exactly one of body or diff", field="patch")
    if cmd.body is not None:
        body = encode_like(cmd.body, source, field="patch.body")
        return section_text_with_body(source, span, body)
    full = apply_unified_diff(source, cmd.diff or "")
    tail = len(source) - span.end
    if full[: span.start] != source[: span.start] or full[len(full) - tail :] != source[span.end :]:
        raise ValidationError(
            f"the diff changes bytes outside section {cmd.section_key!r} of {path}",
            field="patch.diff",
        )
    return full[span.start : len(full) - tail]


def decide_patch(
    state: RepoState,
    cmd: PatchSection,
    disk: bytes | None,
    base: bytes | None,
    now: datetime,
    ids: IdSource,
    policy: Policy,
    merge3: Merge3,
) -> Outcome:
    """Decide a section patch (see the module docstring).

    Args:
        state: the repository's projection.
        cmd: the patch.
        disk: the file's bytes now (None: missing).
        base: the snapshot of the version ``expectedFileHash`` names, if detente kept it.
        now: the server's time.
        ids: id source.
        policy: limits (meeting deadline for a deferred edit).
        merge3: a three-way merge (``git merge-file`` semantics).

    Raises:
        NotFoundError, ForbiddenError, LeaseExpired, OverlapBlocking, InvalidTransition,
        StaleFencingToken, RevisionConflict, ValidationError (malformed patch or file).
    """
    key = section_key(cmd.section_key, "sectionKey")
    doc = get_document(state, cmd.path)
    require_class(doc, DocClass.SECTION_OWNED)
    record = doc.section(key)
    claim = check_writer(state, doc, cmd.claim_id, cmd.fencing_token, [key], now)
    revision = record.revision if record is not None else 0
    if cmd.expected_section_revision != revision:
        raise stale_document(
            doc,
            f"section {doc.path}#{key} is at revision {revision}, not "
            f"{cmd.expected_section_revision}: re-read it and patch again",
            cmd.expected_section_revision,
            revision,
        )
    if disk is None:
        raise missing_file(doc)
    disk_outline = parse(disk, path=doc.path)
    on_disk = disk_outline.section(key)
    if on_disk is None:
        raise NotFoundError(f"{doc.path} has no section {key!r} on disk", sectionKey=key)
    if cmd.expected_file_hash == digest(disk):
        source = disk
    elif base is not None:
        source = base
    elif record is not None and digest(on_disk.text(disk)) == record.hash:
        source = disk
    else:
        source = None
    if source is None:
        proposal = _proposal(cmd, disk, disk_outline, doc.path)
        return _defer(doc, claim, cmd, disk, proposal, now, ids, policy)
    source_outline = parse(source, path=doc.path)
    proposal = _proposal(cmd, source, source_outline, doc.path)
    span = source_outline.section(key)
    assert span is not None
    theirs = splice(source, span, proposal)
    check_confined(key, source_outline, source, parse(theirs, path=doc.path), theirs)
    _keep_nested(state, doc, claim, key, source_outline, source, theirs)
    if on_disk.text(disk) == span.text(source):
        result: bytes | None = splice(disk, on_disk, proposal)
    else:
        result = merge3(disk, source, theirs)
        if result is not None:
            try:
                check_confined(key, disk_outline, disk, parse(result, path=doc.path), result)
            except ValidationError:
                result = None
    if result is None:
        return _defer(doc, claim, cmd, disk, proposal, now, ids, policy)
    check_size(result, "patch")
    outline = parse(result, path=doc.path)
    written = [
        k
        for k in (key, *outline.descendants(key))
        if _changed(disk_outline, disk, outline, result, k)
    ]
    event = written_event(
        ids,
        doc.id,
        claim,
        ev.MEMORY_SECTION_PATCHED,
        sectionKey=key,
        merged=disk != source,
        writtenSections=written or [key],
        worktree=cmd.worktree,
        **outline_to_wire(outline, result),
    )
    return Outcome([event], result, details={"merged": disk != source})


def _changed(a: Outline, a_data: bytes, b: Outline, b_data: bytes, key: str) -> bool:
    x, y = a.section(key), b.section(key)
    return x is None or y is None or x.text(a_data) != y.text(b_data)


def _keep_nested(
    state: RepoState,
    doc: MemoryDocument,
    claim: Claim,
    key: str,
    before: Outline,
    data: bytes,
    after_data: bytes,
) -> None:
    """Sections nested in ``key`` that other claims own must keep their bytes."""
    after = parse(after_data, path=doc.path)
    moved = []
    for nested in before.descendants(key):
        others = [o for o in owners(state, doc, nested) if o.id != claim.id and not o.advisory]
        if others and _changed(before, data, after, after_data, nested):
            moved.append(f"{doc.path}#{nested}")
    if moved:
        raise OverlapBlocking(
            f"refused: the patch changes {', '.join(moved)}, owned by other claims",
            claimId=claim.id,
            targets=moved,
        )


def _defer(
    doc: MemoryDocument,
    claim: Claim,
    cmd: PatchSection,
    disk: bytes,
    proposal: bytes,
    now: datetime,
    ids: IdSource,
    policy: Policy,
) -> Outcome:
    """Keep the user's section; record the agent's edit; the claim negotiates again."""
    span = parse(disk, path=doc.path).section(cmd.section_key)
    assert span is not None
    diff = unified_diff(disk, splice(disk, span, proposal), doc.path)
    target = f"{doc.path}#{cmd.section_key}"
    reason = (
        f"{target} was edited on disk since the version claim {claim.id} based its edit on, "
        "and the edits overlap"
    )
    artifact_id, meeting_id = ids("art"), ids("mtg")
    require(claim.status, ClaimStatus.NEGOTIATING, claim_id=claim.id)
    events = [
        written_event(
            ids,
            doc.id,
            claim,
            ev.MEMORY_PATCH_DEFERRED,
            artifactId=artifact_id,
            sectionKey=cmd.section_key,
            reason=reason,
            diff=diff,
            meetingId=meeting_id,
        ),
        ev.meeting_opened(
            ids,
            meeting_id,
            [claim.id],
            [{"target": target, "claimIds": [claim.id], "reason": reason}],
            policy.meeting_deadline(now),
        ),
        ev.status_event(
            ids,
            claim.id,
            ev.CLAIM_NEGOTIATING,
            to=ClaimStatus.NEGOTIATING.value,
            reason=f"its edit of {target} conflicts with a user's edit (artifact {artifact_id})",
            meetingId=meeting_id,
        ),
    ]
    on_disk = digest(disk)
    refusal = RevisionConflict(
        f"{reason} (the file hash differs: you read {cmd.expected_file_hash[:12]}, the file "
        f"is now {on_disk[:12]}): the user's content stays; your edit is kept as patch "
        f"artifact {artifact_id} and claim {claim.id} re-enters negotiation in meeting "
        f"{meeting_id}",
        expected=cmd.expected_file_hash,
        actual=on_disk,
        current=current(doc),
    )
    refusal.extra.update(artifactId=artifact_id, meetingId=meeting_id, sectionKey=cmd.section_key)
    return Outcome(events, None, refusal=refusal)
