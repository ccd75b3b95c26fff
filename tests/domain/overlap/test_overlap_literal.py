"""One path-pattern semantics: a pattern also matches the path spelled like it (git)."""

from __future__ import annotations

from detente.domain.overlap import PatternIndex, escape, intersect, matches

ROUTE = "app/[id]/page.tsx"  # a Next.js dynamic route: brackets are part of the name


def test_a_pattern_matches_the_path_spelled_exactly_like_it() -> None:
    assert matches(ROUTE, ROUTE)
    assert matches(ROUTE, "app/i/page.tsx")  # the glob reading still holds
    assert matches("src/*.py", "src/*.py")
    assert not matches(ROUTE, "app/x/page.tsx")


def test_escaping_a_path_gives_the_pattern_of_that_one_file() -> None:
    escaped = escape(ROUTE)
    assert escaped == "app/[[]id]/page.tsx"
    assert matches(escaped, ROUTE)
    assert not matches(escaped, "app/i/page.tsx")
    assert escape("a*b?.py") == "a[*]b[?].py"


def test_a_route_pattern_and_its_escaped_spelling_overlap_on_the_route_file() -> None:
    # The case: B's escaped claim must meet A's plain one, in both orders.
    assert intersect(ROUTE, "app/[[]id[]]/page.tsx") == ROUTE
    assert intersect("app/[[]id[]]/page.tsx", ROUTE) == ROUTE
    assert intersect(ROUTE, escape(ROUTE)) == ROUTE


def test_the_glob_witness_is_preferred_to_the_literal_spelling() -> None:
    assert intersect("src/*.py", "src/**") == "src/x.py"


def test_the_index_finds_the_holders_of_a_concrete_path_read_literally() -> None:
    index = PatternIndex()
    index.add("a", ROUTE)
    index.add("b", "app/**")
    index.add("c", "app/[!i]d]/page.tsx")
    index.add("d", "lib/*.ts")
    assert index.matching(ROUTE) == [("a", ROUTE), ("b", "app/**")]
    assert index.matching("app/i/page.tsx") == [("a", ROUTE), ("b", "app/**")]
    assert index.matching(ROUTE, exclude="a") == [("b", "app/**")]
    assert index.matching("lib/x.ts") == [("d", "lib/*.ts")]
