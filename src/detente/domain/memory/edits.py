"""Byte-exact edits of memory files: section splices, unified diffs, appends, comparisons.

Every function is pure over ``bytes``. Text is decoded with ``surrogateescape`` where
lines must be compared, so undecodable bytes survive a round trip unchanged.

Unified diffs are applied like ``patch`` without fuzz (GNU diffutils manual, "Merging with
patch"): each hunk's old lines (context and removals) must occur exactly, searched
outward from the line its header names (shifted by the previous hunks' offset); a hunk
that does not occur fails the whole diff. ``\\ No newline at end of file`` is honoured.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from detente.domain.memory.markdown import HEADING, Outline, Span, digest
from detente.domain.memory.text_style import newline_of
from detente.errors import ValidationError

__all__ = [
    "SectionChanges",
    "append_entry",
    "apply_unified_diff",
    "compare_sections",
    "section_text_with_body",
    "splice",
    "unified_diff",
]

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def splice(data: bytes, span: Span, new_text: bytes) -> bytes:
    """``data`` with ``span``'s bytes replaced by ``new_text``; every other byte kept."""
    return data[: span.start] + new_text + data[span.end :]


def section_text_with_body(data: bytes, span: Span, body: bytes) -> bytes:
    """The span's new bytes when its body becomes ``body`` (heading or markers kept).

    A non-empty body gets a final line ending (the file's, see ``newline_of``) so that
    what follows (the end marker, the next heading) stays on its own line; only a heading
    section that ends the file without a final line ending keeps ending without one.
    ``body`` is expected in the file's line ending and encoding already (``encode_like``).

    A heading section keeps the blank lines that framed its old body (after the heading,
    before the next one) unless the new body brings its own: replacing ``Run make.`` by
    ``Run ninja.`` keeps the Markdown's spacing.
    """
    newline = newline_of(data)
    head = data[span.start : span.body_start]
    tail = data[span.body_end : span.end]
    if span.kind == HEADING and body.strip():
        old = data[span.body_start : span.body_end]
        lead, trail = _blank_frame(old)
        if not _starts_blank(body):
            body = lead + body
        if trail and not _ends_blank(body):
            if not body.endswith((b"\n", b"\r")):
                body += newline
            body += trail
    if body and not head.endswith((b"\n", b"\r")):
        head += newline
    at_eof_without_newline = (
        span.kind == HEADING and span.end == len(data) and not data.endswith((b"\n", b"\r"))
    )
    if body and not body.endswith((b"\n", b"\r")) and not at_eof_without_newline:
        body += newline
    return head + body + tail


def _blank_lines(lines: list[bytes]) -> bytes:
    return b"".join(line for line in lines if not line.strip())


def _blank_frame(body: bytes) -> tuple[bytes, bytes]:
    """The blank lines before the first and after the last non-blank line of ``body``.

    A body with no text at all (``\n`` between two headings) frames with its blank lines
    on both sides.
    """
    lines = body.splitlines(keepends=True)
    text = [i for i, line in enumerate(lines) if line.strip()]
    if not text:
        blank = _blank_lines(lines)
        return blank, blank
    return _blank_lines(lines[: text[0]]), _blank_lines(lines[text[-1] + 1 :])


def _starts_blank(body: bytes) -> bool:
    first = body.splitlines(keepends=True)[0] if body else b""
    return not first.strip()


def _ends_blank(body: bytes) -> bool:
    lines = body.splitlines(keepends=True)
    return len(lines) > 1 and not lines[-1].strip()


def append_entry(data: bytes, entry: bytes) -> tuple[bytes, int]:
    """Append ``entry`` as whole lines. Returns ``(new bytes, offset of the entry)``.

    A file not ending in a line ending gets one first (existing bytes never change); the
    entry gets a final one (the file's, see ``newline_of``).

    Raises:
        ValidationError: ``validation_error`` (field ``entry``) when the entry is empty.
    """
    if not entry.strip():
        raise ValidationError("an appended entry must not be empty", field="entry")
    newline = newline_of(data)
    if not entry.endswith((b"\n", b"\r")):
        entry += newline
    sep = newline if data and not data.endswith((b"\n", b"\r")) else b""
    return data + sep + entry, len(data) + len(sep)


def unified_diff(old: bytes, new: bytes, label: str) -> str:
    """A unified diff (3 lines of context) from ``old`` to ``new``, files named ``label``."""
    a = old.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    b = new.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, f"a/{label}", f"b/{label}")
    out: list[str] = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


@dataclass
class _Hunk:
    old_start: int
    old: list[str]
    new: list[str]


def _parse_hunks(diff: str) -> list[_Hunk]:
    hunks: list[_Hunk] = []
    lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        header = _HUNK.match(lines[i])
        i += 1
        if header is None:
            continue
        old_count = int(header.group(2) if header.group(2) is not None else 1)
        new_count = int(header.group(4) if header.group(4) is not None else 1)
        hunk = _Hunk(int(header.group(1)), [], [])
        seen_old = seen_new = 0
        last: str | None = None
        while i < len(lines) and (seen_old < old_count or seen_new < new_count):
            raw = lines[i]
            tag, text = (raw[0], raw[1:]) if raw not in ("\n", "\r\n") else (" ", raw)
            if tag == "\\":
                i += 1
                continue
            if tag not in " -+":
                raise ValidationError(
                    f"malformed unified diff: unexpected line {raw.rstrip()!r} in a hunk",
                    field="patch.diff",
                )
            if tag in " -":
                hunk.old.append(text)
                seen_old += 1
            if tag in " +":
                hunk.new.append(text)
                seen_new += 1
            last = tag
            i += 1
            if i < len(lines) and lines[i].startswith("\\"):
                # The line just read has no newline at end of file (on its side(s)).
                if last in " -":
                    hunk.old[-1] = hunk.old[-1].removesuffix("\n")
                if last in " +":
                    hunk.new[-1] = hunk.new[-1].removesuffix("\n")
        if seen_old < old_count or seen_new < new_count:
            raise ValidationError("malformed unified diff: a hunk is truncated", field="patch.diff")
        hunks.append(hunk)
    if not hunks:
        raise ValidationError("the diff has no hunk ('@@ -a,b +c,d @@')", field="patch.diff")
    return hunks


def _find(lines: list[str], wanted: list[str], expected: int, lower: int) -> int | None:
    """The position of ``wanted`` in ``lines`` at or after ``lower``, nearest ``expected``."""
    if not wanted:
        return max(lower, min(expected, len(lines)))
    last = len(lines) - len(wanted)
    for delta in range(0, len(lines) + 1):
        for pos in (expected - delta, expected + delta) if delta else (expected,):
            if lower <= pos <= last and lines[pos : pos + len(wanted)] == wanted:
                return pos
    return None


def apply_unified_diff(data: bytes, diff: str) -> bytes:
    """Apply a unified diff to ``data`` (see the module docstring).

    Raises:
        ValidationError: ``validation_error`` (field ``patch.diff``) when the diff is
            malformed or a hunk's old lines do not occur.
    """
    lines = data.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    out: list[str] = []
    cursor = offset = 0
    for number, hunk in enumerate(_parse_hunks(diff), 1):
        expected = max(hunk.old_start - 1, 0) + offset if hunk.old else hunk.old_start + offset
        pos = _find(lines, hunk.old, expected, cursor)
        if pos is None:
            raise ValidationError(
                f"hunk {number} of the diff does not apply: its context and removed lines "
                "are not in the current text",
                field="patch.diff",
                hunk=number,
            )
        out.extend(lines[cursor:pos])
        out.extend(hunk.new)
        cursor = pos + len(hunk.old)
        offset = pos - (hunk.old_start - 1) if hunk.old else offset
    out.extend(lines[cursor:])
    return "".join(out).encode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class SectionChanges:
    """Sections of a *before* file that an *after* file deletes, changes, or adds."""

    deleted: tuple[str, ...]
    changed: tuple[str, ...]
    added: tuple[str, ...]

    @property
    def touched(self) -> tuple[str, ...]:
        return self.deleted + self.changed


def compare_sections(
    before: Outline, before_data: bytes, after: Outline, after_data: bytes
) -> SectionChanges:
    """Which sections (by key, document order) differ between two versions of a file.

    A section counts as changed when its own bytes changed (nested sections excluded), so
    editing a subsection does not count as editing the section around it.
    """
    old = before.own_hashes(before_data)
    new = after.own_hashes(after_data)
    return SectionChanges(
        deleted=tuple(k for k in old if k not in new),
        changed=tuple(k for k in old if k in new and new[k] != old[k]),
        added=tuple(k for k in new if k not in old),
    )


def check_confined(
    key: str, before: Outline, before_data: bytes, after: Outline, after_data: bytes
) -> None:
    """Check that an edit of section ``key`` changed nothing outside it.

    The section must still exist (same key and kind); every section that neither
    contains it nor lies inside it must keep its key and bytes.

    Raises:
        ValidationError: ``validation_error`` (field ``patch``) naming what moved.
    """
    target = after.section(key)
    original = before.section(key)
    if target is None or original is None or target.kind != original.kind:
        raise ValidationError(
            f"the edit removes or renames section {key!r}: keep its heading or markers",
            field="patch",
        )
    scope_before = {key, *before.ancestors(key), *before.descendants(key)}
    scope_after = {key, *after.ancestors(key), *after.descendants(key)}
    old = {
        k: digest(s.text(before_data)) for k, s in _by_key(before).items() if k not in scope_before
    }
    new = {k: digest(s.text(after_data)) for k, s in _by_key(after).items() if k not in scope_after}
    if old != new or before.ancestors(key) != after.ancestors(key):
        moved = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        raise ValidationError(
            f"the edit of section {key!r} would change other sections "
            f"({', '.join(moved) or 'its nesting'}): a body may only hold deeper headings",
            field="patch",
            sections=moved,
        )


def _by_key(outline: Outline) -> dict[str, Span]:
    return {s.key: s for s in outline.sections}
