"""The outline of a memory file: heading slugs, nesting, markers, byte ranges."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from detente.domain.memory.markdown import MarkupError, parse, slugify

DOC = b"""# CLAUDE.md

Intro.

## Build

Run make.

### Linux

apt install.

## Style

```
## not a heading inside a fence
```
<!-- detente:begin section checklist -->
## not a heading inside markers
<!-- detente:end section checklist -->

<!-- detente:begin generated claims -->
- none
<!-- detente:end generated claims -->
"""


def test_headings_become_nested_sections_keyed_by_slug_with_exact_byte_ranges() -> None:
    outline = parse(DOC)

    keys = [(s.key, s.kind, s.parent) for s in outline.sections]
    assert keys == [
        ("claudemd", "heading", None),
        ("build", "heading", "claudemd"),
        ("linux", "heading", "build"),
        ("style", "heading", "claudemd"),
        ("checklist", "marker", "style"),
    ]
    build = outline.section("build")
    assert build is not None
    assert build.text(DOC) == b"## Build\n\nRun make.\n\n### Linux\n\napt install.\n\n"
    assert build.body(DOC).startswith(b"\nRun make.")
    assert outline.section("claudemd").text(DOC) == DOC  # type: ignore[union-attr]
    assert outline.descendants("build") == ["linux"]
    assert outline.ancestors("linux") == ["build", "claudemd"]


def test_fences_and_marker_bodies_hide_headings_and_regions_are_listed_apart() -> None:
    outline = parse(DOC)

    checklist = outline.section("checklist")
    assert checklist is not None
    assert checklist.body(DOC) == b"## not a heading inside markers\n"
    [region] = outline.regions
    assert region.key == "claims" and region.body(DOC) == b"- none\n"
    assert all("not" not in s.key for s in outline.sections)


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Build", "build"),
        ("Code Style & Lint", "code-style--lint"),
        ("API v2.0 (beta)", "api-v20-beta"),
        ("snake_case names", "snake_case-names"),
        ("Été über", "été-über"),
    ],
)
def test_slugs_follow_github_anchors(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_repeated_headings_get_numbered_keys_in_document_order() -> None:
    outline = parse(b"## Notes\na\n## Notes\nb\n## Notes-1\nc\n")

    assert [s.key for s in outline.sections] == ["notes", "notes-1", "notes-1-1"]


def test_closing_hashes_and_indentation_follow_commonmark() -> None:
    outline = parse(b"  ## Build ##\nx\n    ## code block, not a heading\n#hashtag\n")

    assert [(s.key, s.title) for s in outline.sections] == [("build", "Build")]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (b"a\n<!-- detente:begin generated claims -->\nx\n", 2, "missing end marker"),
        (
            b"<!-- detente:end generated claims -->\nx\n<!-- detente:begin generated claims -->\n",
            1,
            "no begin marker",
        ),
        (
            b"<!-- detente:begin generated claims -->\n<!-- detente:begin generated claims -->\n"
            b"<!-- detente:end generated claims -->\n",
            2,
            "second begin marker",
        ),
        (
            b"<!-- detente:begin generated a -->\n<!-- detente:end generated a -->\n"
            b"<!-- detente:begin generated a -->\n<!-- detente:end generated a -->\n",
            3,
            "opened twice",
        ),
        (b"<!-- detente:begin claims -->\n", 1, "malformed"),
        (
            b"## Build\n<!-- detente:begin section build -->\n<!-- detente:end section build -->\n",
            2,
            "both a heading slug and a marker key",
        ),
    ],
)
def test_bad_markers_raise_a_validation_error_naming_the_line(
    text: bytes, line: int, words: str
) -> None:
    with pytest.raises(MarkupError) as caught:
        parse(text, path="AGENTS.md")

    assert caught.value.code == "validation_error"
    assert caught.value.line == line
    assert words in caught.value.detail
    assert f"AGENTS.md:{line}" in caught.value.detail


_titles = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
    min_size=1,
    max_size=12,
).filter(lambda t: t.strip() and not t.strip().startswith("#"))
_bodies = st.lists(
    st.sampled_from(["text", "", "- item", "`code`", "    # four spaces: a code block"]), max_size=4
)


@given(st.lists(st.tuples(st.integers(1, 3), _titles, _bodies), min_size=1, max_size=8))
def test_top_level_sections_tile_the_file_after_the_preamble(
    parts: list[tuple[int, str, list[str]]],
) -> None:
    text = "preamble\n" + "".join(
        "#" * level + " " + title.strip() + "\n" + "".join(b + "\n" for b in body)
        for level, title, body in parts
    )
    data = text.encode()
    outline = parse(data)

    assert len(outline.sections) == len(parts)
    assert len({s.key for s in outline.sections}) == len(parts)
    tops = [s for s in outline.sections if s.parent is None]
    assert b"preamble\n" + b"".join(s.text(data) for s in tops) == data
    for span in outline.sections:
        assert data[span.start : span.body_start].lstrip(b"#").startswith(b" ")
