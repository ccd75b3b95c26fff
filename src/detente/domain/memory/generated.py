"""Generated regions: rendered from the canonical state, never overwriting a user's edit.

Region keys and what they render (one Markdown bullet per record, deterministic order,
no times, so an unchanged state renders identical bytes):

- ``claims``: every holding claim: id, agent, status, objective, paths, modules, symbols,
  contract areas, memory impacts;
- ``meetings``: every open or escalated meeting: participants and contested targets;
- ``ownership``: every section of a registered ``section_owned`` document with owners.

Rendering (:func:`plan_render`) re-renders a region only when its body on disk still has
the hash detente recorded for it (at registration or the last render). A differing body
is a user's edit: it stays, and the plan reports it so the caller opens a reconciliation
(upstream, or a manual overlay). A region with an open reconciliation is not touched.
Text outside the markers is never touched. ``<!--`` in rendered text is escaped so a
record can never forge a marker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from detente.domain.meetings.model import MeetingStatus
from detente.domain.memory.authority import owners
from detente.domain.memory.edits import section_text_with_body, splice
from detente.domain.memory.markdown import Outline, Span, digest, parse
from detente.domain.memory.model import DocClass, MemoryDocument, outline_to_wire
from detente.domain.memory.text_style import restyle
from detente.domain.state import RepoState
from detente.errors import ValidationError

__all__ = ["RENDERERS", "RenderPlan", "plan_overlay", "plan_render", "render_region"]


def _clean(text: str) -> str:
    return " ".join(text.split()).replace("<!--", "&lt;!--")


def _claims(state: RepoState) -> list[str]:
    lines = []
    for c in sorted(state.claims.values(), key=lambda c: (c.created_at, c.id)):
        if not c.holding:
            continue
        line = f"- `{c.id}` {_clean(c.agent.name)} ({c.status.value}): {_clean(c.objective)}"
        for label, names in (
            ("paths", c.paths),
            ("modules", c.modules),
            ("symbols", c.symbols),
            ("contracts", c.contract_areas),
        ):
            if names:
                line += f"; {label} " + ", ".join(f"`{_clean(n)}`" for n in names)
        if c.memory_impacts:
            line += "; memory " + ", ".join(
                f"`{_clean(m.path)}" + (f"#{','.join(m.sections)}" if m.sections else "") + "`"
                for m in c.memory_impacts
            )
        lines.append(line)
    return lines or ["- (no live claims)"]


def _meetings(state: RepoState) -> list[str]:
    lines = []
    for m in sorted(state.meetings.values(), key=lambda m: (m.created_at, m.id)):
        if m.status is MeetingStatus.RESOLVED:
            continue
        targets = ", ".join(f"`{_clean(t.target)}`" for t in m.contested_targets)
        lines.append(
            f"- `{m.id}` {m.status.value}: {', '.join(m.participants)}; contested {targets}"
        )
    return lines or ["- (no open meetings)"]


def _ownership(state: RepoState) -> list[str]:
    lines = []
    for doc in sorted(state.memory.documents.values(), key=lambda d: d.path):
        if doc.doc_class is not DocClass.SECTION_OWNED:
            continue
        for section in doc.sections:
            held = owners(state, doc, section.key)
            if held:
                who = ", ".join(f"`{c.id}` {_clean(c.agent.name)}" for c in held)
                lines.append(f"- `{_clean(doc.path)}#{section.key}`: {who}")
    return lines or ["- (no section owners)"]


#: Region key -> renderer of its lines.
RENDERERS: dict[str, Callable[[RepoState], list[str]]] = {
    "claims": _claims,
    "meetings": _meetings,
    "ownership": _ownership,
}


def render_region(state: RepoState, key: str) -> bytes:
    """The body of region ``key`` for the current state (UTF-8, newline-terminated lines).

    Raises:
        ValidationError: ``validation_error`` for a key without a renderer.
    """
    check_regions([key])
    return "".join(line + "\n" for line in RENDERERS[key](state)).encode("utf-8")


def check_regions(keys: list[str]) -> None:
    """Every region key must have a renderer (``validation_error`` naming it otherwise)."""
    for key in keys:
        if key not in RENDERERS:
            raise ValidationError(
                f"no renderer for generated region {key!r} (known: {', '.join(sorted(RENDERERS))})",
                field="regions",
                region=key,
            )


@dataclass
class RenderPlan:
    """What a render does to one file.

    Attributes:
        data: the file's new bytes (the same object as the input when nothing changed).
        rendered: regions whose body was replaced.
        edited: ``(key, recorded hash, disk hash, body on disk)`` of newly found user edits.
        kept: regions left alone (a user's edit, or an open reconciliation).
        content: the content fields of the event (``fileHash``, ``sections``, ``regions``),
            where kept regions keep their recorded hash.
    """

    data: bytes
    rendered: list[str] = field(default_factory=list)
    edited: list[tuple[str, str, str, bytes]] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    content: dict[str, Any] = field(default_factory=dict)


def plan_render(state: RepoState, doc: MemoryDocument, data: bytes) -> RenderPlan:
    """Render every region of ``data`` that nobody edited (see the module docstring).

    Raises:
        MarkupError: missing, reversed or duplicated markers (``validation_error``).
        ValidationError: a region without a renderer.
    """
    outline = parse(data, path=doc.path)
    check_regions([r.key for r in outline.regions])
    plan = RenderPlan(data=data)
    recorded: dict[str, str] = {}
    new = data
    for region in sorted(outline.regions, key=lambda r: r.start, reverse=True):
        body = region.body(data)
        disk_hash = digest(body)
        previous = doc.region(region.key)
        if doc.open_reconciliation(region.key) is not None:
            plan.kept.append(region.key)
            recorded[region.key] = previous.hash if previous else disk_hash
            continue
        if previous is not None and previous.hash != disk_hash:
            plan.kept.append(region.key)
            plan.edited.append((region.key, previous.hash, disk_hash, body))
            recorded[region.key] = previous.hash
            continue
        fresh = restyle(render_region(state, region.key), data)
        recorded[region.key] = digest(fresh)
        if fresh != body:
            new = splice(new, region, section_text_with_body(new, region, fresh))
            plan.rendered.append(region.key)
    plan.data = new
    plan.content = _content(parse(new, path=doc.path), new, recorded)
    return plan


def added_lines(diff: str) -> frozenset[str]:
    """The lines a unified diff adds (``+`` lines, without the ``+++`` header)."""
    return frozenset(
        line[1:].rstrip("\r\n")
        for line in diff.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    )


def plan_overlay(
    state: RepoState,
    doc: MemoryDocument,
    data: bytes,
    key: str,
    decision: str,
    changed: frozenset[str] | None = None,
) -> tuple[bytes, bytes, dict[str, Any]]:
    """Resolve a reconciliation of region ``key``: ``upstream`` or ``overlay``.

    Both re-render the region. ``overlay`` first copies the lines the user changed (the
    lines of the region body in ``changed``: what the reconciliation's diff adds to the
    rendering; every line when None) to just after the end marker, after one blank line,
    where they are manual text from then on; ``upstream`` keeps the user's body only in
    the log (``userContent``) for someone to carry into the records.

    Returns:
        ``(new bytes, the user's region body, the event's content fields)``.

    Raises:
        MarkupError / ValidationError: bad markers, or the region is gone from the file.
    """
    outline = parse(data, path=doc.path)
    region: Span | None = outline.region(key)
    if region is None:
        raise ValidationError(
            f"{doc.path} has no generated region {key!r} any more: restore its markers first",
            field="regionKey",
        )
    user = region.body(data)
    fresh = restyle(render_region(state, key), data)
    text = section_text_with_body(data, region, fresh)
    kept = [
        line
        for line in user.splitlines(keepends=True)
        if changed is None or line.decode("utf-8", "replace").rstrip("\r\n") in changed
    ]
    if decision == "overlay" and kept:
        newline = b"\r\n" if b"\r\n" in data else b"\n"
        body = b"".join(kept)
        text += newline + (body if body.endswith(b"\n") else body + newline)
    new = splice(data, region, text)
    recorded = {r.key: p.hash for r in outline.regions if (p := doc.region(r.key)) is not None}
    recorded[key] = digest(fresh)
    return new, user, _content(parse(new, path=doc.path), new, recorded)


def _content(outline: Outline, data: bytes, recorded: dict[str, str]) -> dict[str, Any]:
    content = outline_to_wire(outline, data)
    content["regions"] = [
        {"key": r.key, "hash": recorded.get(r.key, digest(r.body(data)))} for r in outline.regions
    ]
    return content
