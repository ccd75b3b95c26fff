"""The outline of a Markdown memory file: sections, generated regions, byte ranges, hashes.

A file is handled as bytes (UTF-8 expected; undecodable bytes never break parsing), so
every range is a byte range and splicing one section leaves every other byte as it was.
Lines end with ``\n``, ``\r\n`` or ``\r`` (CommonMark 0.31 section 2.1).

**Block structure** is CommonMark's, from ``markdown-it-py`` (its block tokens carry
line maps): the parser decides what is a heading, a fenced or indented code block
(sections 4.4, 4.5) or an HTML block (section 4.6); this module only turns line maps
into byte ranges. A YAML (``---``) or TOML (``+++``) front matter block opening the file
is not Markdown: its lines are hidden from the parser, so nothing in it is a heading.

**Heading sections.** A top-level ATX heading (``## Build``, section 4.2) or setext
heading (a paragraph underlined with ``===`` or ``---``, section 4.3) outside explicit
regions starts a section that runs up to the next heading of the same or a higher level,
or to the end of the file: the usual outline semantics, so deeper headings nest inside
it. Headings inside code blocks, HTML blocks, block quotes or lists are content. A setext
heading's section starts at its first text line; its body after the underline. The key
is the heading's
GitHub anchor (the ``github-slugger`` algorithm: lower-case, drop every character that is
not a letter, digit, mark, connector punctuation, ``-`` or space, turn each space into
``-``; a repeated slug gets ``-1``, ``-2``, ... in document order). A heading whose slug is
empty gets ``section``.

**Marker sections and generated regions.** A line holding only
``<!-- detente:begin section KEY -->`` opens an explicit section that a line holding
``<!-- detente:end section KEY -->`` closes; ``generated`` instead of ``section`` marks a
region rendered by detente. Both ranges include their marker lines; the *body* is what
lies between. Headings inside them are content, not sections; regions do not nest.
``KEY`` is ``[A-Za-z0-9][A-Za-z0-9._-]*`` (at most 100 characters). Marker lines inside
code blocks and front matter are content.

A missing end marker, an end marker before its begin (reversed), a second begin marker
(nested or duplicated), a repeated key or a malformed ``detente:`` marker raises
:class:`MarkupError` (``validation_error``) naming the line: such a file is never edited.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from detente.domain.memory.text_style import decoding_of
from detente.errors import ValidationError

if TYPE_CHECKING:  # imported on first parse: reading a claim never parses Markdown
    from markdown_it import MarkdownIt

__all__ = ["MarkupError", "Outline", "Span", "digest", "parse", "slugify"]

HEADING: Final = "heading"
MARKER: Final = "marker"
GENERATED: Final = "generated"
#: Nesting level given to explicit sections and regions: deeper than any heading.
MARKER_LEVEL: Final = 7

_LINE_END = re.compile(rb"\r\n|\n|\r")
_BOM: Final = b"\xef\xbb\xbf"
_FRONT_MATTER: Final = {"---": ("---", "..."), "+++": ("+++",)}
_CODE_TOKENS: Final = frozenset({"fence", "code_block"})
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
    """``(start, end, text)`` per line; ``end`` includes the line ending, ``text`` excludes it.

    Text is read in the file's encoding (UTF-8, else Latin-1: see ``text_style``).
    """
    encoding = decoding_of(data)
    out: list[tuple[int, int, str]] = []
    pos = len(_BOM) if data.startswith(_BOM) else 0  # the BOM belongs to no line
    for ending in _LINE_END.finditer(data, pos):
        out.append((pos, ending.end(), data[pos : ending.start()].decode(encoding, "replace")))
        pos = ending.end()
    if pos < len(data):
        out.append((pos, len(data), data[pos:].decode(encoding, "replace")))
    return out


def _front_matter(texts: list[str]) -> int:
    """How many lines the front matter opening the file takes (0 when there is none)."""
    closers = _FRONT_MATTER.get(texts[0].rstrip(" \t")) if texts else None
    if closers is None:
        return 0
    for number in range(1, len(texts)):
        if texts[number].rstrip(" \t") in closers:
            return number + 1
    return 0  # never closed: an ordinary thematic break


@functools.cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


@dataclass(frozen=True)
class _Blocks:
    """What CommonMark says about the lines: code lines and top-level headings."""

    code: frozenset[int]
    headings: tuple[tuple[int, int, int, str], ...]  # (level, first line, body line, title)


def _blocks(texts: list[str], hidden: int) -> _Blocks:
    source = "\n".join(["" if i < hidden else t for i, t in enumerate(texts)]) + "\n"
    tokens = _parser().parse(source)
    code: set[int] = set(range(hidden))
    headings: list[tuple[int, int, int, str]] = []
    for i, token in enumerate(tokens):
        if token.map is None:
            continue
        first, after = token.map
        if token.type in _CODE_TOKENS:
            code.update(range(first, after))
        elif token.type == "heading_open" and token.level == 0:
            inline = tokens[i + 1]
            title = " ".join(part.strip(" \t") for part in inline.content.splitlines())
            headings.append((int(token.tag[1]), first, after, title.strip()))
    return _Blocks(frozenset(code), tuple(headings))


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
    lines = _lines(data)
    texts = [text for _, _, text in lines]
    blocks = _blocks(texts, _front_matter(texts))
    explicit: list[tuple[_Open, int, int]] = []  # (opening, body_end, end)
    inside: set[int] = set()  # lines of explicit ranges: their headings are content
    open_: _Open | None = None
    seen: dict[tuple[str, str], int] = {}
    for index, (start, end, text) in enumerate(lines):
        number = index + 1
        if index in blocks.code:
            if open_ is not None:
                inside.add(index)
            continue
        marker = _MARKER.fullmatch(text)
        if marker is None and _MARKER_HINT.match(text):
            raise MarkupError(
                "malformed detente marker (expected '<!-- detente:begin|end "
                "section|generated KEY -->')",
                line=number,
                path=path,
            )
        if open_ is not None:
            inside.add(index)
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
            inside.add(index)
            open_ = _Open(kind, key, start, end, number)
    headings = [
        _Heading(level, title, lines[first][0], _offset(lines, after, len(data)), first + 1)
        for level, first, after, title in blocks.headings
        if first not in inside and first < len(lines)
    ]
    if open_ is not None:
        raise MarkupError(
            f"missing end marker of {open_.kind} {open_.key!r}", line=open_.line, path=path
        )
    return _assemble(data, headings, explicit, path)


def _offset(lines: list[tuple[int, int, str]], index: int, size: int) -> int:
    """The byte offset where line ``index`` starts (``size`` past the last line)."""
    return lines[index][0] if index < len(lines) else size


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
