"""Markdown structure per CommonMark: what is a section, and edits in the file's own style."""

from __future__ import annotations

import pytest

from detente.domain.memory.edits import section_text_with_body, splice
from detente.domain.memory.markdown import parse
from detente.domain.memory.text_style import encode_like, newline_of
from detente.errors import ValidationError

ISSUE = b"## Build\n\nmake\n\nStyle\n-----\n\nAlways pep8. Owned by agent B.\n"


def _patch(data: bytes, key: str, body: str) -> bytes:
    span = parse(data).section(key)
    assert span is not None
    return splice(
        data, span, section_text_with_body(data, span, encode_like(body, data, field="b"))
    )


def test_a_setext_heading_ends_the_atx_section_before_it() -> None:
    outline = parse(ISSUE)
    assert [(s.key, s.level) for s in outline.sections] == [("build", 2), ("style", 2)]
    style = outline.section("style")
    assert style is not None and style.text(ISSUE).startswith(b"Style\n-----\n")


def test_patching_a_section_keeps_the_next_setext_section_byte_for_byte() -> None:
    new = _patch(ISSUE, "build", "\nninja\n\n")
    assert new == b"## Build\n\nninja\n\nStyle\n-----\n\nAlways pep8. Owned by agent B.\n"


def test_a_setext_only_file_has_nested_sections() -> None:
    data = b"Guide\n=====\n\nintro\n\nSetup\n-----\nsteps\n"
    outline = parse(data)
    assert [(s.key, s.parent) for s in outline.sections] == [("guide", None), ("setup", "guide")]
    setup = outline.section("setup")
    assert setup is not None and setup.body(data) == b"steps\n"


@pytest.mark.parametrize(
    "data",
    [
        b"# Real\n\n```\n# fenced\n```\n",
        b"# Real\n\n~~~~\n# fenced\n~~~\n# still fenced\n~~~~\n",
        b"# Real\n\n    # indented code\n",
        b"# Real\n\n<div>\n# inside html\n</div>\n",
        b"---\ntitle: x\n# a yaml comment\n---\n# Real\n",
        b"+++\n# toml comment\n+++\n# Real\n",
        b"# Real\n\n> # quoted\n\n- # in a list\n",
    ],
)
def test_only_top_level_headings_outside_code_html_and_front_matter_are_sections(
    data: bytes,
) -> None:
    assert [s.key for s in parse(data).sections] == ["real"]


def test_an_unclosed_front_matter_fence_is_a_thematic_break() -> None:
    assert [s.key for s in parse(b"---\n# Title\n").sections] == ["title"]


def test_a_marker_inside_a_code_block_is_content() -> None:
    data = b"# A\n\n```\n<!-- detente:end section k -->\n<!-- detente:begin oops\n```\n"
    assert [s.key for s in parse(data).sections] == ["a"]


def test_a_heading_inside_an_explicit_section_is_content() -> None:
    data = b"<!-- detente:begin section k -->\nText\n====\n<!-- detente:end section k -->\n"
    assert [s.key for s in parse(data).sections] == ["k"]


def test_a_crlf_file_stays_crlf_and_byte_exact_outside_the_patched_section() -> None:
    data = b"# Notes\r\n\r\n## Build\r\n\r\nmake\r\n\r\n## Style\r\n\r\npep8\r\n"
    new = _patch(data, "build", "\nninja\nand tests\n\n")
    assert (
        new == b"# Notes\r\n\r\n## Build\r\n\r\nninja\r\nand tests\r\n\r\n## Style\r\n\r\npep8\r\n"
    )
    assert b"\n" not in new.replace(b"\r\n", b"")


def test_a_section_at_the_end_of_a_crlf_file_gets_a_crlf_line_end() -> None:
    data = b"## Build\r\nmake\r\n## Style\r\npep8"
    new = _patch(data, "build", "ninja")
    assert new == b"## Build\r\nninja\r\n## Style\r\npep8"


def test_a_latin1_file_is_patched_in_latin1_and_refuses_what_latin1_cannot_hold() -> None:
    data = "# Caf\u00e9\n\nd\u00e9j\u00e0\n".encode("latin-1")
    new = _patch(data, "café", "\nna\u00efve\n")
    assert new == "# Caf\u00e9\n\nna\u00efve\n".encode("latin-1")
    with pytest.raises(ValidationError) as caught:
        _patch(data, "café", "\u2603\n")
    assert caught.value.field == "b"


def test_a_utf8_file_with_a_byte_order_mark_keeps_it() -> None:
    data = b"\xef\xbb\xbf# Title\n\nold\n"
    assert _patch(data, "title", "\nnew\n") == b"\xef\xbb\xbf# Title\n\nnew\n"


def test_a_utf16_file_is_refused_with_a_clear_error() -> None:
    data = "# Title\n".encode("utf-16")
    with pytest.raises(ValidationError, match="UTF-16"):
        encode_like("x", data, field="patch.body")


@pytest.mark.parametrize(
    ("data", "newline"),
    [(b"", b"\n"), (b"a\r\nb\r\nc\n", b"\r\n"), (b"a\rb\r", b"\r"), (b"a\nb\r\n", b"\n")],
)
def test_the_file_line_ending_is_its_most_common_one(data: bytes, newline: bytes) -> None:
    assert newline_of(data) == newline
