"""Carved patterns (a pattern minus its carve-outs): matching and exact intersection.

The oracle is brute force over a small universe of paths: whenever a universe path lies
in both carved patterns the search must find a witness, and every witness it returns
must lie in both and in no carve-out.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from detente.domain.overlap.carveouts import carved_matches, intersect_carved, is_covered

SEGMENTS = ("a", "b", "x.md", "y.py")
UNIVERSE = tuple(
    "/".join(parts) for depth in (1, 2, 3) for parts in itertools.product(SEGMENTS, repeat=depth)
)
PATTERNS = ("**", "a/**", "*", "a/*", "*.md", "**/*.md", "a/x.md", "b/**", "*/x.md", "a/*/y.py")

_pattern = st.sampled_from(PATTERNS)
_cuts = st.lists(_pattern, max_size=2, unique=True)


def test_the_issue_instance_docs_minus_the_holders_file_keeps_every_other_doc() -> None:
    assert carved_matches("docs/**", ["docs/a.md"], "docs/b.md")
    assert not carved_matches("docs/**", ["docs/a.md"], "docs/a.md")
    assert intersect_carved("docs/**", ["docs/a.md"], "docs/a.md", []) is None
    assert intersect_carved("docs/**", ["docs/a.md"], "docs/*.md", []) == "docs/x.md"


def test_a_carve_out_that_removes_the_plain_witness_still_finds_another_path() -> None:
    assert intersect_carved("docs/**", ["docs/*"], "docs/**", []) == "docs/x/x"
    assert intersect_carved("src/**", ["src/api/**"], "src/api/*.py", []) is None


def test_coverage_is_decided_exactly() -> None:
    assert is_covered("docs/*.md", ["docs/**"])
    assert not is_covered("docs/**", ["docs/*.md"])
    assert is_covered("a/**", ["a/*", "a/*/**"])


@settings(max_examples=300, deadline=None)
@given(a=_pattern, a_cuts=_cuts, b=_pattern, b_cuts=_cuts)
def test_the_carved_intersection_agrees_with_brute_force(
    a: str, a_cuts: list[str], b: str, b_cuts: list[str]
) -> None:
    both = [p for p in UNIVERSE if carved_matches(a, a_cuts, p) and carved_matches(b, b_cuts, p)]
    witness = intersect_carved(a, a_cuts, b, b_cuts)
    if witness is not None:
        assert carved_matches(a, a_cuts, witness) and carved_matches(b, b_cuts, witness)
    if both:
        assert witness is not None, (a, a_cuts, b, b_cuts, both[:3])
