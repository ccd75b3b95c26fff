"""Byte-exact section splices, unified diffs, appends and confinement checks."""

from __future__ import annotations

import difflib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from detente.domain.memory.edits import (
    append_entry,
    apply_unified_diff,
    check_confined,
    compare_sections,
    section_text_with_body,
    splice,
    unified_diff,
)
from detente.domain.memory.markdown import parse
from detente.domain.memory.text_style import newline_of
from detente.errors import ValidationError

DOC = b"# Title\n\nintro\n\n## Build\n\nRun make.\n\n## Style\n\nUse black.\n"


def _underline(line: str) -> bool:
    """A setext heading underline (``===`` or ``---``): it would turn the line above into a
    heading, so a body holding one is no longer one section's body."""
    bare = line.strip()
    return bool(bare) and set(bare) in ({"="}, {"-"})


_line = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
    max_size=10,
).filter(lambda t: not t.lstrip(" ").startswith(("#", "`", "~", "<!--")) and not _underline(t))
_body = st.lists(_line, max_size=5).map(lambda lines: "".join(x + "\n" for x in lines))


@given(st.sampled_from(["title", "build", "style"]), _body)
def test_replacing_a_body_changes_only_that_sections_bytes(key: str, body: str) -> None:
    outline = parse(DOC)
    span = outline.section(key)
    assert span is not None

    new = splice(DOC, span, section_text_with_body(DOC, span, body.encode()))

    assert new[: span.body_start] == DOC[: span.body_start]
    assert new[len(new) - (len(DOC) - span.end) :] == DOC[span.end :]
    after = parse(new)
    got = after.section(key).body(new)  # type: ignore[union-attr]
    assert body.encode() in got  # verbatim, framed only by the old body's blank lines
    assert got.replace(body.encode(), b"", 1).strip() == b""
    if key != "title":
        check_confined(key, outline, DOC, after, new)


def test_a_body_without_a_final_newline_still_leaves_the_next_heading_on_its_own_line() -> None:
    span = parse(DOC).section("build")
    assert span is not None

    new = splice(DOC, span, section_text_with_body(DOC, span, b"Run ninja."))

    assert b"## Build\n\nRun ninja.\n\n## Style\n" in new  # the blank lines around stay
    assert [s.key for s in parse(new).sections] == ["title", "build", "style"]


def test_a_replaced_body_keeps_the_blank_lines_around_its_heading() -> None:
    span = parse(DOC).section("build")
    assert span is not None

    def replaced(body: bytes) -> bytes:
        return splice(DOC, span, section_text_with_body(DOC, span, body))

    framed = DOC.replace(b"Run make.", b"Run ninja.")
    assert replaced(b"Run ninja.\n") == framed
    assert replaced(b"\nRun ninja.\n\n") == framed  # its own blank lines: not doubled
    assert replaced(b"Run ninja.\n\n\n").count(b"\n\n\n") == 1  # kept as given
    crlf = DOC.replace(b"\n", b"\r\n")
    crlf_span = parse(crlf).section("build")
    assert crlf_span is not None
    assert splice(crlf, crlf_span, section_text_with_body(crlf, crlf_span, b"x")) == crlf.replace(
        b"Run make.", b"x"
    )


def test_a_body_that_opens_a_sibling_heading_is_not_confined() -> None:
    outline = parse(DOC)
    span = outline.section("build")
    assert span is not None
    new = splice(DOC, span, section_text_with_body(DOC, span, b"x\n## Style\nhijack\n"))

    with pytest.raises(ValidationError) as caught:
        check_confined("build", outline, DOC, parse(new), new)

    assert "style" in caught.value.detail


def test_a_deeper_heading_inside_the_body_is_allowed() -> None:
    outline = parse(DOC)
    span = outline.section("build")
    assert span is not None
    new = splice(DOC, span, section_text_with_body(DOC, span, b"x\n### Linux\napt\n"))

    check_confined("build", outline, DOC, parse(new), new)
    assert parse(new).ancestors("linux") == ["build", "title"]


_lines = st.lists(st.sampled_from(["a", "b", "c", "", "d d", "é"]), max_size=12)


@given(_lines, _lines, st.booleans(), st.booleans())
def test_a_unified_diff_applies_back_to_its_target(
    a: list[str], b: list[str], a_nl: bool, b_nl: bool
) -> None:
    old = "\n".join(a) + ("\n" if a and a_nl else "")
    new = "\n".join(b) + ("\n" if b and b_nl else "")
    diff = unified_diff(old.encode(), new.encode(), "f.md")
    if old == new:
        return

    assert apply_unified_diff(old.encode(), diff) == new.encode()


def test_a_diff_applies_at_an_offset_when_lines_were_inserted_above() -> None:
    old = b"".join(b"line %d\n" % i for i in range(20))
    new = old.replace(b"line 15\n", b"line fifteen\n")
    diff = "".join(
        difflib.unified_diff(old.decode().splitlines(True), new.decode().splitlines(True), "a", "b")
    )
    shifted = b"inserted\n" * 3 + old

    assert apply_unified_diff(shifted, diff) == b"inserted\n" * 3 + new


def test_a_hunk_whose_context_is_gone_fails_the_whole_diff() -> None:
    diff = "--- a\n+++ b\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"

    with pytest.raises(ValidationError) as caught:
        apply_unified_diff(b"keep\nchanged by a user\n", diff)

    assert caught.value.field == "patch.diff"


@given(st.binary(max_size=40), st.text(min_size=1, max_size=30).filter(str.strip))
def test_an_append_keeps_every_existing_byte_and_adds_whole_lines(data: bytes, entry: str) -> None:
    new, offset = append_entry(data, entry.encode())
    newline = newline_of(data)  # the file's own line ending

    assert new.startswith(data)
    assert new.endswith((b"\n", b"\r"))
    assert not entry.encode().endswith((b"\n", b"\r")) or new.endswith(entry.encode())
    assert new[offset:].removesuffix(newline) == entry.encode().removesuffix(newline) or (
        new[offset:] == entry.encode()
    )
    assert offset == len(data) or new[offset - 1 : offset] in (b"\n", b"\r")


def test_comparing_versions_names_deleted_changed_and_added_sections() -> None:
    new = DOC.replace(b"## Style\n\nUse black.\n", b"## Lint\nruff\n").replace(b"make", b"ninja")

    changes = compare_sections(parse(DOC), DOC, parse(new), new)

    assert changes.deleted == ("style",)
    assert changes.changed == ("build",)  # the title's own bytes did not change
    assert changes.added == ("lint",)


@given(st.lists(st.sampled_from([b"\r\n", b"\n", b"\r", b"a", b"\r\r\n", b"\n\r"]), max_size=40))
def test_a_files_line_ending_is_its_most_common_one_counted_as_a_regex_splits_them(
    parts: list[bytes],
) -> None:
    data = b"".join(parts)
    found = re.findall(rb"\r\n|\n|\r", data)
    counts = {e: found.count(e) for e in (b"\r\n", b"\n", b"\r")}
    best = max(counts.values())
    expected = (
        b"\n"
        if best == 0 or counts[b"\n"] == best
        else b"\r\n"
        if counts[b"\r\n"] == best
        else b"\r"
    )

    assert newline_of(data) == expected
