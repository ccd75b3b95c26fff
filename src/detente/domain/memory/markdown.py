"""The outline of a Markdown memory file: sections, generated regions, byte ranges, hashes.

A file is handled as bytes (UTF-8 expected; undecodable bytes never break parsing), so
every range is a byte range and splicing one section leaves every other byte as it was.

**Heading sections.** An ATX heading (``#`` to ``######`` after at most three spaces,
CommonMark 0.31 section 4.2) outside fenced code blocks (section 4.5) and outside explicit
regions starts a section that runs up to the next heading of the same or a higher level,
or to the end of the file: the usual outline semantics, so deeper headings nest inside
it. Setext headings (``===`` underlines) are not sections. The key is the heading's
GitHub anchor (the ``github-slugger`` algorithm: lower-case, drop every character that is
not a letter, digit, mark, connector punctuation, ``-`` or space, turn each space into
``-``; a repeated slug gets ``-1``, ``-2``, ... in document order). A heading whose slug is
empty gets ``section``.

**Marker sections and generated regions.** A line holding only
``<!-- detente:begin section KEY -->`` opens an explicit section that a line holding
``<!-- detente:end section KEY -->`` closes; ``generated`` instead of ``section`` marks a
region rendered by detente. Both ranges include their marker lines; the *body* is what
lies between. Headings inside them are content, not sections; regions do not nest.
``KEY`` is ``[A-Za-z0-9][A-Za-z0-9._-]*`` (at most 100 characters).

A missing end marker, an end marker before its begin (reversed), a second begin marker
(nested or duplicated), a repeated key or a malformed ``detente:`` marker raises
:class:`MarkupError` (``validation_error``) naming the line: such a file is never edited.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from detente.errors import ValidationError

__all__ = ["MarkupError", "Outline", "Span", "digest", "parse", "slugify"]

HEADING: Final = "heading"
MARKER: Final = "marker"
GENERATED: Final = "generated"
#: Nesting level given to explicit sections and regions: deeper than any heading.
MARKER_LEVEL: Final = 7

_HEADING = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)(.*)")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_MARKER = re.compile(
    r"[ \t]*<!--[ \t]*detente:(begin|end)[ \t]+(section|generated)[ \t]+"
    r"([A-Za-z0-9][A-Za-z0-9._-]{0,99})[ \t]*-->[ \t]*"
)
_MARKER_HINT = re.compile(r"[ \t]*<!--[ \t]*detente:")


class MarkupError(ValidationError):
    """The file's markers or sections are malformed (``validation_error``, with ``line``)."""

    def __init__(self, detail: str, *, line: int, path: str | None = None) -> None:
        where = f"{path}:{line}" if path else f"line {line}"
        super().__init__(f"{where}: {detail}", field="content", line=line, path=path)
        self.line = line


def digest(data: bytes) -> str:
    """SHA-256 of ``data`` as 64 lower-case hex digits (file, section and region hashes)."""
    return hashlib.sha256(data).hexdigest()


def slugify(title: str) -> str:
    """The GitHub anchor slug of a heading text, before de-duplication (see module doc)."""
    kept = []
    for ch in title.lower():
        category = unicodedata.category(ch)
        if ch in "- " or category[0] in "LNM" or category == "Pc":
            kept.append("-" if ch == " " else ch)
    return "".join(kept)


@dataclass(frozen=True)
class Span:
    """One section or region of a file.

    Attributes:
        key: the section key (heading slug or marker key) or the region key.
        title: the heading text (the key for explicit sections and regions).
        kind: ``heading``, ``marker`` (explicit section) or ``generated`` (region).
        level: heading level 1..6; :data:`MARKER_LEVEL` for explicit ranges.
        start: byte offset of its first line (heading or begin marker).
        body_start: byte offset just after that line.
        body_end: byte offset where the body ends (the end marker line, or ``end``).
        end: byte offset just after the span.
        parent: key of the innermost heading section containing it, if any.
        line: 1-based line number of its first line.
    """

    key: str
    title: str
    kind: str
    level: int
    start: int
    body_start: int
    body_end: int
    end: int
    parent: str | None
    line: int

    def text(self, data: bytes) -> bytes:
        """The span's bytes (heading or markers included)."""
        return data[self.start : self.end]

    def body(self, data: bytes) -> bytes:
        """The bytes between the heading line (or begin marker) and the span's end."""
        return data[self.body_start : self.body_end]


@dataclass(frozen=True)
class Outline:
    """Sections (document order) and generated regions of one file's bytes."""

    sections: tuple[Span, ...]
    regions: tuple[Span, ...]

    def section(self, key: str) -> Span | None:
        return next((s for s in self.sections if s.key == key), None)

    def region(self, key: str) -> Span | None:
        return next((r for r in self.regions if r.key == key), None)

    def ancestors(self, key: str) -> list[str]:
        """Keys of the sections containing section ``key``, innermost first."""
        by_key = {s.key: s for s in self.sections}
        out: list[str] = []
        parent = by_key[key].parent if key in by_key else None
        while parent is not None:
            out.append(parent)
            parent = by_key[parent].parent
        return out

    def descendants(self, key: str) -> list[str]:
        """Keys of the sections nested inside section ``key``, in document order."""
        return [s.key for s in self.sections if key in self.ancestors(s.key)]

    def own_hashes(self, data: bytes) -> dict[str, str]:
        """``key -> digest`` of every section's own bytes: its span minus nested sections."""
        out: dict[str, str] = {}
        for s in self.sections:
            own, pos = b"", s.start
            for child in self.sections:
                if child.parent == s.key:
                    own += data[pos : child.start]
                    pos = child.end
            out[s.key] = digest(own + data[pos : s.end])
        return out


@dataclass
class _Heading:
    level: int
    title: str
    start: int
    body_start: int
    line: int


@dataclass
class _Open:
    kind: str
    key: str
    start: int
    body_start: int
    line: int


def _lines(data: bytes) -> list[tuple[int, int, str]]:
    """``(start, end, text)`` per line; ``end`` includes the newline, ``text`` excludes it."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        end = len(data) if nl < 0 else nl + 1
        raw = data[pos : end - 1 if nl >= 0 else end]
        out.append((pos, end, raw.decode("utf-8", "replace").removesuffix("\r")))
        pos = end
    return out


def _heading(text: str) -> tuple[int, str] | None:
    m = _HEADING.fullmatch(text)
    if m is None:
        return None
    content = _CLOSING_HASHES.sub("", m.group(2).strip(" \t")).strip(" \t")
    return len(m.group(1)), content


def parse(data: bytes, *, path: str | None = None) -> Outline:
    """Parse the outline of ``data`` (see the module docstring for the rules).

    Args:
        data: the file's bytes.
        path: named in error details.

    Returns:
        The :class:`Outline`.

    Raises:
        MarkupError: ``validation_error`` for malformed markers or repeated keys.
    """
    headings: list[_Heading] = []
    explicit: list[tuple[_Open, int, int]] = []  # (opening, body_end, end)
    open_: _Open | None = None
    fence: tuple[str, int] | None = None
    seen: dict[tuple[str, str], int] = {}
    for number, (start, end, text) in enumerate(_lines(data), 1):
        marker = _MARKER.fullmatch(text)
        if marker is None and _MARKER_HINT.match(text) and fence is None:
            raise MarkupError(
                "malformed detente marker (expected '<!-- detente:begin|end "
                "section|generated KEY -->')",
                line=number,
                path=path,
            )
        if open_ is not None:
            if marker is None:
                continue
            verb, kind, key = marker.groups()
            if verb == "begin":
                what = "a second begin marker" if key == open_.key else f"region {key!r} begins"
                raise MarkupError(
                    f"{what} inside {open_.kind} {open_.key!r} (opened at line {open_.line}); "
                    "regions do not nest",
                    line=number,
                    path=path,
                )
            if (kind, key) != (open_.kind, open_.key):
                raise MarkupError(
                    f"end marker of {kind} {key!r} inside {open_.kind} {open_.key!r} "
                    f"(opened at line {open_.line})",
                    line=number,
                    path=path,
                )
            explicit.append((open_, start, end))
            open_ = None
            continue
        if fence is not None:
            close = _FENCE_CLOSE.fullmatch(text)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= fence[1]:
                fence = None
            continue
        if marker is not None:
            verb, kind, key = marker.groups()
            if verb == "end":
                raise MarkupError(
                    f"end marker of {kind} {key!r} has no begin marker before it "
                    "(missing or reversed markers)",
                    line=number,
                    path=path,
                )
            if (kind, key) in seen:
                raise MarkupError(
                    f"{kind} {key!r} is opened twice (first at line {seen[(kind, key)]})",
                    line=number,
                    path=path,
                )
            seen[(kind, key)] = number
            open_ = _Open(kind, key, start, end, number)
            continue
        opening = _FENCE_OPEN.fullmatch(text)
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence = (opening.group(1)[0], len(opening.group(1)))
            continue
        heading = _heading(text)
        if heading is not None:
            headings.append(_Heading(heading[0], heading[1], start, end, number))
    if open_ is not None:
        raise MarkupError(
            f"missing end marker of {open_.kind} {open_.key!r}", line=open_.line, path=path
        )
    return _assemble(data, headings, explicit, path)


def _assemble(
    data: bytes, headings: list[_Heading], explicit: list[tuple[_Open, int, int]], path: str | None
) -> Outline:
    spans: list[Span] = []
    used: dict[str, int] = {}
    stack: list[tuple[int, str, int]] = []  # (level, key, end) of open heading sections
    for i, h in enumerate(headings):
        end = next((n.start for n in headings[i + 1 :] if n.level <= h.level), len(data))
        base = slugify(h.title) or "section"
        key = base
        while key in used:
            used[base] += 1
            key = f"{base}-{used[base]}"
        used[key] = 0
        while stack and stack[-1][0] >= h.level:
            stack.pop()
        parent = stack[-1][1] if stack else None
        spans.append(
            Span(key, h.title, HEADING, h.level, h.start, h.body_start, end, end, parent, h.line)
        )
        stack.append((h.level, key, end))
    sections = list(spans)
    regions: list[Span] = []
    for opening, body_end, end in explicit:
        parent = None
        for s in spans:  # the innermost heading section containing the range
            if s.start <= opening.start < s.end:
                parent = s.key
        span = Span(
            opening.key,
            opening.key,
            MARKER if opening.kind == "section" else GENERATED,
            MARKER_LEVEL,
            opening.start,
            opening.body_start,
            body_end,
            end,
            parent,
            opening.line,
        )
        if span.kind == GENERATED:
            regions.append(span)
            continue
        if span.key in used:
            raise MarkupError(
                f"section key {span.key!r} is both a heading slug and a marker key",
                line=span.line,
                path=path,
            )
        sections.append(span)
    sections.sort(key=lambda s: (s.start, s.level))
    return Outline(tuple(sections), tuple(regions))
