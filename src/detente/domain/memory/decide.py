"""Deciding registration, rendering and reconciliation of memory documents (pure).

- **register**: records the class and what the file holds now (hash, sections, regions);
  a path registers once (``revision_conflict`` with the current record after that). A
  generated document must parse and every region must have a renderer; a private one
  records nothing about its content; an append-only one may not exist yet (empty).
- **render**: re-renders the regions nobody edited; each newly found user edit opens a
  reconciliation (``memory.reconciliation_opened``) and stays in the file.
- **reconcile**: the user's edit belongs ``upstream`` (kept in the log, region
  re-rendered) or in a manual ``overlay`` (the lines the user changed copied after the
  region, after a blank line; region re-rendered).
"""

from __future__ import annotations

from collections.abc import Callable

from detente.domain import events as ev
from detente.domain.memory.commands import Outcome, Reconcile, Register
from detente.domain.memory.edits import unified_diff
from detente.domain.memory.generated import (
    added_lines,
    check_regions,
    plan_overlay,
    plan_render,
    render_region,
)
from detente.domain.memory.guards import (
    check_size,
    current,
    doc_path,
    get_document,
    memory_event,
    missing_file,
    require_class,
)
from detente.domain.memory.markdown import digest, parse
from detente.domain.memory.model import DocClass, MemoryDocument, outline_to_wire
from detente.domain.memory.text_style import restyle
from detente.domain.policy import IdSource
from detente.domain.state import RepoState
from detente.errors import NotFoundError, RevisionConflict, ValidationError

__all__ = ["decide_reconcile", "decide_register", "decide_render"]

DECISIONS = ("upstream", "overlay")


def decide_register(state: RepoState, cmd: Register, disk: bytes | None, ids: IdSource) -> Outcome:
    """Register a document (see the module docstring).

    Args:
        state: the repository's projection.
        cmd: path and class.
        disk: the file's bytes (None: it does not exist).
        ids: id source.

    Raises:
        ValidationError: bad path or class, missing file, malformed markers, unknown
            region, file too large.
        RevisionConflict: the path is already registered (``expected`` 0).
    """
    path = doc_path(state, cmd.path)
    try:
        doc_class = DocClass(cmd.doc_class)
    except ValueError:
        known = ", ".join(c.value for c in DocClass)
        raise ValidationError(
            f"unknown class {cmd.doc_class!r} (one of {known})", field="class"
        ) from None
    existing = state.memory.get(path)
    if existing is not None:
        raise RevisionConflict(
            f"{path} is already registered (as {existing.doc_class.value}, revision "
            f"{existing.revision})",
            expected=0,
            actual=existing.revision,
            current=current(existing),
        )
    content: dict[str, object] = {}
    if doc_class is DocClass.APPEND_ONLY:
        data = disk or b""
        check_size(data, "path")
        content = {"fileHash": digest(data), "size": len(data)}
    elif doc_class is not DocClass.PRIVATE:
        if disk is None:
            raise ValidationError(f"{path} does not exist in the working tree", field="path")
        check_size(disk, "path")
        outline = parse(disk, path=path)
        if doc_class is DocClass.GENERATED:
            check_regions([r.key for r in outline.regions])
        content = outline_to_wire(outline, disk)
    event = memory_event(
        ids, ids("mem"), ev.MEMORY_REGISTERED, path=path, **{"class": doc_class.value}, **content
    )
    return Outcome([event])


def decide_render(
    state: RepoState,
    doc: MemoryDocument,
    disk: bytes | None,
    ids: IdSource,
    recorded_body: Callable[[str], bytes | None] | None = None,
) -> Outcome:
    """Render one generated document (see :func:`~.generated.plan_render`).

    A reconciliation's diff compares the user's region body with the body detente last
    wrote there (``recorded_body(region hash)``, when the caller kept it), else with a
    fresh rendering.

    Returns:
        The outcome; ``details`` has ``rendered``, ``kept`` and ``reconciliations`` (ids
        opened now).

    Raises:
        ForbiddenError (not generated), NotFoundError (file missing), MarkupError and
        ValidationError (bad markers, unknown region): the file is left untouched.
    """
    require_class(doc, DocClass.GENERATED)
    if disk is None:
        raise missing_file(doc)
    plan = plan_render(state, doc, disk)
    events = []
    opened = []
    for key, recorded, disk_hash, body in plan.edited:
        reconciliation_id = ids("rec")
        opened.append(reconciliation_id)
        events.append(
            memory_event(
                ids,
                doc.id,
                ev.MEMORY_RECONCILIATION_OPENED,
                reconciliationId=reconciliation_id,
                regionKey=key,
                recordedHash=recorded,
                diskHash=disk_hash,
                diff=unified_diff(
                    (recorded_body(recorded) if recorded_body else None)
                    or restyle(render_region(state, key), disk),
                    body,
                    f"{doc.path}#{key}",
                ),
            )
        )
    recorded_regions = [{"key": r.key, "hash": r.hash} for r in doc.regions]
    if (
        plan.data != disk
        or plan.content["fileHash"] != doc.file_hash
        or (plan.content["regions"] != recorded_regions)
    ):
        events.append(
            memory_event(
                ids,
                doc.id,
                ev.MEMORY_RENDERED,
                rendered=plan.rendered,
                kept=plan.kept,
                **plan.content,
            )
        )
    details = {"rendered": plan.rendered, "kept": plan.kept, "reconciliations": opened}
    return Outcome(events, plan.data if plan.data != disk else None, details=details)


def decide_reconcile(
    state: RepoState, cmd: Reconcile, disk: bytes | None, ids: IdSource
) -> Outcome:
    """Resolve an open reconciliation (see the module docstring).

    Raises:
        NotFoundError (document, file or open reconciliation), ForbiddenError,
        RevisionConflict (``expectedRevision``), ValidationError (decision, markers).
    """
    doc = get_document(state, cmd.path)
    require_class(doc, DocClass.GENERATED)
    if cmd.decision not in DECISIONS:
        raise ValidationError(
            f"decision must be one of {', '.join(DECISIONS)}, not {cmd.decision!r}",
            field="decision",
        )
    if cmd.expected_revision is not None and cmd.expected_revision != doc.revision:
        raise RevisionConflict(
            f"{doc.path} is at revision {doc.revision}, not {cmd.expected_revision}",
            expected=cmd.expected_revision,
            actual=doc.revision,
            current=current(doc),
        )
    found = [
        r
        for r in doc.reconciliations
        if r.status == "open"
        and (cmd.reconciliation_id in (None, r.id))
        and (cmd.region_key in (None, r.region_key))
    ]
    if not found:
        raise NotFoundError(
            f"no open reconciliation of {doc.path} matches",
            reconciliationId=cmd.reconciliation_id,
            regionKey=cmd.region_key,
        )
    if len(found) > 1:
        raise ValidationError(
            f"{len(found)} reconciliations of {doc.path} are open: name one "
            f"({', '.join(r.id for r in found)})",
            field="reconciliationId",
        )
    reconciliation = found[0]
    if disk is None:
        raise missing_file(doc)
    new, user, content = plan_overlay(
        state,
        doc,
        disk,
        reconciliation.region_key,
        cmd.decision,
        added_lines(reconciliation.diff),
    )
    event = memory_event(
        ids,
        doc.id,
        ev.MEMORY_RECONCILIATION_RESOLVED,
        reconciliationId=reconciliation.id,
        regionKey=reconciliation.region_key,
        decision=cmd.decision,
        userContent=user.decode("utf-8", "replace"),
        **content,
    )
    return Outcome(
        [event], new if new != disk else None, details={"reconciliation": reconciliation.id}
    )
