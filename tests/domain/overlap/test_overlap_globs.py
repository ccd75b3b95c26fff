"""Glob matching and glob-vs-glob intersection, checked against wcmatch as an oracle."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from wcmatch import glob as wcglob

from detente.domain.overlap import compile_pattern, intersect, matches, normalize_pattern
from detente.errors import ValidationError

# wcmatch with these flags has our semantics: `**` is a globstar that matches zero or more
# segments (and a trailing `a/**` does not match `a`), `*` matches a leading dot, case counts.
_ORACLE_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.CASE


@functools.lru_cache(maxsize=4096)
def _oracle(pattern: str) -> Callable[[str], bool]:
    """wcmatch's glob reading plus the git pathspec rule: a pattern matches its spelling."""
    matcher = wcglob.compile(pattern, flags=_ORACLE_FLAGS)
    return lambda path: path == pattern or bool(matcher.match(path))


def _is_path(path: str) -> bool:
    return bool(path) and all(seg not in ("", ".", "..") for seg in path.split("/"))


# -- the cases the product must get right ---------------------------------------------


@pytest.mark.parametrize(("a", "b"), [("src/**", "src/app.rs"), ("src/app.rs", "src/**")])
def test_a_recursive_glob_overlaps_a_file_under_it_in_both_orders(a: str, b: str) -> None:
    assert intersect(a, b) == "src/app.rs"


def test_a_recursive_extension_glob_overlaps_a_file_in_a_dot_directory() -> None:
    assert intersect("**/*.md", ".github/CONTRIBUTING.md") == ".github/CONTRIBUTING.md"


def test_a_star_never_crosses_a_separator_so_different_depths_are_disjoint() -> None:
    assert intersect("src/*.py", "src/*/x.py") is None


def test_a_root_glob_overlaps_its_recursive_form_with_a_readable_witness() -> None:
    assert intersect("*.py", "**/*.py") == "x.py"
    assert intersect("**/*.py", "*.py") == "x.py"


def test_two_globs_meet_on_a_witness_that_takes_from_both() -> None:
    assert intersect("a/*/c", "a/b/*") == "a/b/c"


def test_a_negated_class_and_its_complement_are_disjoint() -> None:
    assert intersect("[!a]*", "a*") is None
    assert intersect("[^a]*", "a*") is None


def test_a_directory_claim_overlaps_a_file_deep_under_it() -> None:
    assert intersect("docs/", "docs/x/y.md") == "docs/x/y.md"


def test_two_different_literal_paths_are_disjoint() -> None:
    assert intersect("src/a.py", "src/b.py") is None
    assert intersect("src/a.py", "src/a.py") == "src/a.py"


# -- matching semantics --------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("a/**", "a", False),
        ("a/**", "a/b", True),
        ("a/**", "a/b/c", True),
        ("a/**", "ab", False),
        ("a/", "a/b", True),
        ("**", "x", True),
        ("**", ".a/b/c", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/xb", False),
        ("**/b", "b", True),
        ("**/b", "x/y/b", True),
        ("**/b", "xb", False),
        ("*", ".env", True),
        ("*.md", ".md", True),
        ("*", "a/b", False),
        ("?", "ab", False),
        ("src/a.py", "src/a.py", True),
        ("src", "src/a.py", False),
        ("[abc]", "b", True),
        ("[a-c]x", "bx", True),
        ("[!abc]", "d", True),
        ("[!abc]", "a", False),
        ("[^abc]", "é", True),
        ("[\u03b1-\u03c9].txt", "\u03b2.txt", True),
        ("[\u03b1-\u03c9].txt", "b.txt", False),
        ("[]]", "]", True),
        ("[*]", "*", True),
        ("[*]", "x", False),
        ("?", "\U0001f600", True),
    ],
)
def test_matching_follows_the_documented_glob_semantics(
    pattern: str, path: str, expected: bool
) -> None:
    assert matches(pattern, path) is expected


@pytest.mark.parametrize("path", ["", "a//b", "a/", "/a", "./a", "a/./b", "a/../b", "a\x00b"])
def test_a_string_that_is_not_a_path_matches_nothing(path: str) -> None:
    assert not matches("**", path)
    assert not matches("**/*", path)


def test_matching_an_invalid_pattern_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        matches("../x", "x")
    with pytest.raises(ValidationError):
        intersect("a", "[a")


def test_a_compiled_pattern_knows_its_literal_outline() -> None:
    compiled = compile_pattern("lib/ansible/**/*.py")
    assert compiled.pattern == "lib/ansible/**/*.py"
    assert compiled.literal_segments == ("lib", "ansible")
    assert compiled.prefix == "lib/ansible/"
    assert compiled.suffix == ".py"
    assert compiled.extension == "py"
    assert not compiled.is_literal
    assert compile_pattern("docs/") is compile_pattern("docs/**")


# -- witnesses -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "witness"),
    [
        ("**", "**", "x"),
        ("a/*", "a/*", "a/x"),
        ("*", ".*", ".x"),
        ("**/.github/**", "**/*.yml", ".github/x.yml"),
        ("x/**", "x/**/*.py", "x/x.py"),
        ("[ab]/**", "**/[bc]", "a/b"),
    ],
)
def test_the_witness_is_the_cheapest_readable_path(a: str, b: str, witness: str) -> None:
    assert intersect(a, b) == witness


def test_a_dot_or_dot_dot_segment_is_never_a_witness() -> None:
    assert intersect("?", "[.]") is None
    assert intersect("??", "[.][.]") is None
    assert intersect("**/?/x", "**/[.]/*") is None
    assert intersect("???", "[.][.][.]") == "..."


def test_a_class_empty_over_path_characters_matches_only_its_own_spelling() -> None:
    assert intersect("[! -\U0010ffff]", "x*") is None
    assert intersect("[! -\U0010ffff]", "*") == "[! -\U0010ffff]"


def test_exotic_unicode_classes_meet_exactly() -> None:
    assert intersect("[\u03b1-\u03b3]x", "[\u03b2-\u03c9]?") == "\u03b2x"
    assert intersect("[\u03b1-\u03b2]", "[\u03b3-\u03c9]") is None
    assert intersect("[!a-z]", "[a-z]") is None
    witness = intersect("[!a-z]", "?")
    assert witness is not None and matches("[!a-z]", witness)


# -- properties, with wcmatch as the oracle --------------------------------------------

_ATOMS = ["a", "b", ".", "*", "?", "[ab]", "[!a]", "[^.]", "[a-b]", "[.a]", "[!.b]"]


@st.composite
def _patterns(draw: st.DrawFn) -> str:
    segments: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 5)) == 0:
            segments.append("**")
            continue
        atoms = draw(st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=3))
        assume(not any(x == y == "*" for x, y in itertools.pairwise(atoms)))
        segments.append("".join(atoms))
    raw = "/".join(segments)
    try:
        pattern = normalize_pattern(raw)
    except ValidationError:
        assume(False)
        raise
    assume(pattern == raw)
    return pattern


_SEGMENT = st.text(alphabet="ab.", min_size=1, max_size=3).filter(lambda s: s not in (".", ".."))
_PATHS = st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join)

# Every valid path of length <= 6 over the alphabet a, b, '.', '/'.
_SHORT_PATHS = [
    "".join(chars)
    for length in range(1, 7)
    for chars in itertools.product("ab./", repeat=length)
    if _is_path("".join(chars))
]


@settings(max_examples=800, deadline=None)
@given(pattern=_patterns(), path=_PATHS)
def test_matching_agrees_with_wcmatch(pattern: str, path: str) -> None:
    assert matches(pattern, path) == _oracle(pattern)(path)


@settings(max_examples=200, deadline=None)
@given(pattern=_patterns())
def test_matching_agrees_with_wcmatch_on_every_short_path(pattern: str) -> None:
    oracle = _oracle(pattern)
    compiled = compile_pattern(pattern)
    assert [p for p in _SHORT_PATHS if compiled.matches(p)] == [
        p for p in _SHORT_PATHS if oracle(p)
    ]


@settings(max_examples=600, deadline=None)
@given(a=_patterns(), b=_patterns())
def test_every_witness_is_a_path_both_patterns_match_by_the_oracle(a: str, b: str) -> None:
    witness = intersect(a, b)
    if witness is not None:
        assert _is_path(witness)
        assert _oracle(a)(witness)
        assert _oracle(b)(witness)
    assert (intersect(b, a) is None) == (witness is None)


@settings(max_examples=300, deadline=None)
@given(a=_patterns(), b=_patterns())
def test_disjoint_patterns_share_no_short_path_by_the_oracle(a: str, b: str) -> None:
    if intersect(a, b) is not None:
        return
    match_a, match_b = _oracle(a), _oracle(b)
    assert not [p for p in _SHORT_PATHS if match_a(p) and match_b(p)]


@settings(max_examples=300, deadline=None)
@given(a=_patterns(), b=_patterns())
def test_a_shared_short_path_implies_a_witness_no_longer_than_it(a: str, b: str) -> None:
    match_a, match_b = _oracle(a), _oracle(b)
    shared = next((p for p in _SHORT_PATHS if match_a(p) and match_b(p)), None)
    witness = intersect(a, b)
    if shared is None:
        return
    assert witness is not None

    # The witness is cheapest by (segments starting with '.', length).
    def cost(path: str) -> tuple[int, int]:
        return (sum(seg.startswith(".") for seg in path.split("/")), len(path))

    assert cost(witness) <= min(cost(p) for p in _SHORT_PATHS if match_a(p) and match_b(p))


@settings(max_examples=300, deadline=None)
@given(pattern=_patterns(), path=_PATHS)
def test_a_path_overlaps_exactly_the_patterns_that_match_it(pattern: str, path: str) -> None:
    witness = intersect(pattern, path)
    assert (witness is not None) == matches(pattern, path)
    if witness is not None:
        assert witness == path
