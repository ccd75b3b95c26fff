"""Answers read off a pattern's shape equal what the automaton search finds."""

from __future__ import annotations

import random

from detente.domain.overlap import compile_pattern, intersect
from detente.domain.overlap.globs import CompiledPattern
from detente.domain.overlap.search import Budget, cheapest_common_word
from detente.domain.overlap.shapes import (
    deep_tail,
    segment_filter,
    segments_clash,
    shallow_tail,
    shape_witness,
)

from support import repo_paths

_POOL = [
    "a/**",
    "**",
    "*",
    "**/*.go",
    "**/*",
    "a/*.yml",
    "a/**/*.yml",
    "a/**/b/**",
    "a/**/b",
    "*.",
    "?.py",
    "*?.py",
    "a/*_test.go",
    "a/b*c*d",
    "x/**/*",
    ".github/**",
    "a/.x*",
    "a/*.*",
    "**/.*rc",
    "**/.*",
    "a/.*",
    "a/?",
    "**/x/*",
    "a/*/b",
    "a/*/b/**",
    "a/b/*.py",
    "a/b/c.py",
    "a/b.py",
    "a/b/**/*.py",
    "a/[bc]/*.py",
    "a/b/**/*_test.go",
    "lib/**/*.",
    "**/*..",
    "a/*.go/**",
]


def _mix(count: int, seed: int) -> list[str]:
    """Patterns drawn like live claims: exact paths, ``dir/**``, ``dir/*.ext``,
    ``dir/**/*.ext``, ``**/*.ext`` (real ansible paths when the test data is present, else
    a synthetic tree like it)."""
    paths = [p for p in repo_paths() if "/" in p]
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        path = rng.choice(paths)
        parent, name = path.rsplit("/", 1)
        ext = name.rsplit(".", 1)[1] if "." in name else "txt"
        if rng.random() < 0.3:
            parent = parent.rsplit("/", 1)[0] if "/" in parent else parent
        out.append(
            rng.choice(
                [path, f"{parent}/**", f"{parent}/*.{ext}", f"{parent}/**/*.{ext}", f"**/*.{ext}"]
            )
        )
    return out


def _nfa_matches(pattern: CompiledPattern, path: str) -> bool:
    """Literal rule, then the automaton alone (no shortcut)."""
    if pattern.is_literal or path == pattern.pattern:
        return path == pattern.pattern
    return pattern.accepts(pattern.read(path))


def _searched(a: str, b: str) -> str | None:
    """``intersect`` computed the long way: the literal rule and the product search."""
    ca, cb = compile_pattern(a), compile_pattern(b)
    if ca.is_literal:
        return ca.pattern if _nfa_matches(cb, ca.pattern) else None
    if cb.is_literal:
        return cb.pattern if _nfa_matches(ca, cb.pattern) else None
    found = None
    prefixes = ca.prefix.startswith(cb.prefix) or cb.prefix.startswith(ca.prefix)
    suffixes = ca.suffix.endswith(cb.suffix) or cb.suffix.endswith(ca.suffix)
    if prefixes and suffixes:  # the search's precondition
        found = cheapest_common_word(ca, cb, Budget())
    if found is not None:
        return found
    if _nfa_matches(cb, ca.pattern):
        return ca.pattern
    if _nfa_matches(ca, cb.pattern):
        return cb.pattern
    return None


def test_the_shape_witness_is_the_searched_cheapest_path() -> None:
    decided = 0
    for pattern in {*_POOL, *_mix(3000, 1)}:
        compiled = compile_pattern(pattern)
        witness = shape_witness(compiled.segments)
        if witness is None:
            continue
        decided += 1
        assert witness == cheapest_common_word(compiled, compiled, Budget()), pattern
    assert decided > 500


def test_a_shape_with_a_class_or_a_dot_segment_is_left_to_the_search() -> None:
    assert shape_witness(compile_pattern("a/[bc]/*.py").segments) is None
    assert shape_witness(compile_pattern("a/.*").segments) is None
    assert compile_pattern("a/.*").witness() == "a/.x"


def test_a_deep_tail_is_read_only_off_dir_globstar_star_tail() -> None:
    assert deep_tail(compile_pattern("**/*.go").segments) == ".go"
    assert deep_tail(compile_pattern("lib/**/*_test.py").segments) == "_test.py"
    assert deep_tail(compile_pattern("a/**/x.py").segments) is None
    assert deep_tail(compile_pattern("a/*/**/*.py").segments) is None
    assert deep_tail(compile_pattern("a/**/*.p?").segments) is None


def test_a_shallow_tail_is_read_only_off_dir_star_tail() -> None:
    assert shallow_tail(compile_pattern("lib/*.py").segments) == ".py"
    assert shallow_tail(compile_pattern("*.md").segments) == ".md"
    assert shallow_tail(compile_pattern("a/b/*").segments) == ""
    assert shallow_tail(compile_pattern("a/*/x.py").segments) is None
    assert shallow_tail(compile_pattern("a/**/*.py").segments) is None
    assert shallow_tail(compile_pattern("a/*.p?").segments) is None
    assert shallow_tail(compile_pattern("a/x*.py").segments) is None
    assert shallow_tail(compile_pattern("a/b.py").segments) is None


def test_a_shallow_pattern_matches_exactly_what_its_automaton_accepts() -> None:
    patterns = ["lib/*.py", "*.md", "a/b/*", "a/*.", "x/*y.tar.gz"]
    paths = [
        "lib/x.py", "lib/.py", "lib/a/x.py", "lib.py", "lib/x.pyc", "x.md", "a/x.md", ".md",
        "a/b/c", "a/b/c/d", "a/b", "a/x.", "a/.", "a/..x", "x/y.tar.gz", "x/ay.tar.gz",
        "x/a/y.tar.gz", "x/.tar.gz",
    ]  # fmt: skip
    for pattern in patterns:
        compiled = compile_pattern(pattern)
        for path in paths:
            by_automaton = compiled.accepts(compiled.read(path))
            assert compiled.matches_glob(path) == by_automaton, (pattern, path)


def test_a_segment_filter_matches_whole_segments_only() -> None:
    accepts = segment_filter(compile_pattern("a/*.py").segments[1])
    assert accepts is not None
    assert accepts("x.py") and accepts(".py")
    assert not accepts("x.pyc") and not accepts("d/x.py")
    assert segment_filter(compile_pattern("a/[bc]").segments[1]) is None


def test_a_clash_is_claimed_only_for_disjoint_patterns() -> None:
    assert segments_clash(
        compile_pattern("lib/*.py").segments, compile_pattern("lib/sub/**").segments
    )
    assert segments_clash(compile_pattern("a/*").segments, compile_pattern("a/b/c").segments)
    assert not segments_clash(compile_pattern("a/**").segments, compile_pattern("a/b/c").segments)


def test_every_shortcut_of_intersect_agrees_with_the_product_search() -> None:
    rng = random.Random(5)
    patterns = [*_POOL, *_mix(400, 2)]
    pairs = [(a, b) for a in _POOL for b in _POOL]
    pairs += [(rng.choice(patterns), rng.choice(patterns)) for _ in range(4000)]
    for a, b in pairs:
        assert intersect(a, b) == _searched(a, b), (a, b)
