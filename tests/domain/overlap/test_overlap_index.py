"""The overlap index agrees with a brute-force pairwise scan and never scans everything."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detente.domain.overlap import PatternIndex, intersect, normalize_pattern
from detente.domain.overlap.carveouts import intersect_carved
from detente.errors import ValidationError

from support import repo_paths


def _brute(
    entries: list[tuple[str, str]], query: str, exclude: str | None = None
) -> list[tuple[str, str, str]]:
    found = []
    for key, pattern in entries:
        if key == exclude:
            continue
        witness = intersect(query, pattern)
        if witness is not None:
            found.append((key, pattern, witness))
    return sorted(found)


def _index(entries: list[tuple[str, str]]) -> PatternIndex:
    index = PatternIndex()
    for key, pattern in entries:
        index.add(key, pattern)
    return index


def test_an_index_reports_each_overlapping_entry_with_a_witness() -> None:
    index = _index(
        [
            ("c1", "src/**"),
            ("c2", "src/app.rs"),
            ("c2", "docs/"),
            ("c3", "**/*.md"),
            ("c4", "src/*/x.py"),
        ]
    )
    assert index.overlapping("src/app.rs") == [
        ("c1", "src/**", "src/app.rs"),
        ("c2", "src/app.rs", "src/app.rs"),
    ]
    assert index.overlapping("docs/x/y.md") == [
        ("c2", "docs/**", "docs/x/y.md"),
        ("c3", "**/*.md", "docs/x/y.md"),
    ]
    assert index.overlapping("src/*.py") == [("c1", "src/**", "src/x.py")]


def test_a_query_can_exclude_its_own_key() -> None:
    index = _index([("mine", "src/**"), ("theirs", "src/a.py")])
    assert index.overlapping("src/a.py", exclude="mine") == [("theirs", "src/a.py", "src/a.py")]


def test_patterns_are_stored_in_canonical_form() -> None:
    index = _index([("c1", ".\\docs\\")])
    assert index.patterns("c1") == frozenset({"docs/**"})
    assert index.overlapping("docs/a.md") == [("c1", "docs/**", "docs/a.md")]
    index.remove("c1", "docs/")
    assert len(index) == 0


def test_adding_an_entry_twice_keeps_one() -> None:
    index = _index([("c1", "a/**"), ("c1", "a/"), ("c2", "a/**")])
    assert len(index) == 2


def test_removing_entries_forgets_them() -> None:
    index = _index([("c1", "a/**"), ("c1", "b/*.py"), ("c2", "a/x.py")])
    index.remove("c2", "a/x.py")
    assert index.overlapping("a/x.py") == [("c1", "a/**", "a/x.py")]
    assert index.remove_key("c1") == 2
    assert index.remove_key("c1") == 0
    assert len(index) == 0
    assert index.overlapping("**") == []
    assert list(index) == []


def test_removing_an_absent_entry_is_a_key_error() -> None:
    index = _index([("c1", "a/**")])
    with pytest.raises(KeyError):
        index.remove("c1", "b/**")
    with pytest.raises(KeyError):
        index.remove("c2", "a/**")


def test_an_invalid_pattern_is_refused_by_the_index() -> None:
    index = PatternIndex()
    with pytest.raises(ValidationError):
        index.add("c1", "../etc")
    with pytest.raises(ValidationError):
        index.overlapping("/abs")
    assert len(index) == 0


def test_candidates_skip_unrelated_subtrees_and_extensions() -> None:
    index = _index(
        [
            ("py-root", "**/*.py"),
            ("yml-root", "**/*.yml"),
            ("lib", "lib/**"),
            ("lib-file", "lib/a/b.py"),
            ("docs", "docs/**"),
            ("docs-file", "docs/x.md"),
            ("test", "test/units/*.py"),
        ]
    )
    assert index.candidates("lib/a/b.py") == {"py-root", "lib", "lib-file"}
    assert index.candidates("docs/**/*.yml") == {"yml-root", "docs"}
    assert index.candidates("test/units/x.py") == {"py-root", "test"}


def test_a_query_walks_only_the_children_its_segments_match() -> None:
    index = _index(
        [
            ("top-yml", "t/a.yml"),
            ("deep-yml", "t/sub/b.yml"),
            ("deep-tree", "t/sub/**"),
            ("other-dir", "t/other/*.yml"),
            ("t-tree", "t/**"),
        ]
    )
    assert index.candidates("t/*.yml") == {"top-yml", "t-tree"}
    assert index.candidates("t/s*/b.yml") == {"deep-yml", "deep-tree", "t-tree"}
    # ``t/a.yml`` sits on a node the walk passes (a superset, then decided exactly).
    assert index.candidates("t/*/*.yml") == {
        "deep-yml",
        "deep-tree",
        "other-dir",
        "t-tree",
        "top-yml",
    }
    assert [key for key, _, _ in index.overlapping("t/*/*.yml")] == [
        "deep-tree",
        "deep-yml",
        "other-dir",
        "t-tree",
    ]
    # An exact path looks at its own node and its ancestors, never below.
    assert index.candidates("t/sub") == {"t-tree", "deep-tree"}
    assert index.overlapping("t/sub") == [("t-tree", "t/**", "t/sub")]
    assert index.overlapping("t/*.yml") == [
        ("t-tree", "t/**", "t/x.yml"),
        ("top-yml", "t/a.yml", "t/a.yml"),
    ]


def test_candidates_are_a_superset_of_the_true_overlaps() -> None:
    index = _index([("c1", "lib/*.py"), ("c2", "lib/a/b.py")])
    assert index.candidates("lib/a/b.py") == {"c1", "c2"}
    assert index.overlapping("lib/a/b.py") == [("c2", "lib/a/b.py", "lib/a/b.py")]


# -- against brute force on real paths -------------------------------------------------


def _ansible_paths() -> list[str]:
    return repo_paths()


def _claim_patterns(paths: list[str], rng: random.Random, count: int) -> list[str]:
    dirs = sorted({p.rsplit("/", 1)[0] for p in paths if "/" in p})
    exts = sorted({p.rsplit(".", 1)[1] for p in paths if "." in p.rsplit("/", 1)[-1]})
    out = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.55:
            out.append(rng.choice(paths))
        elif roll < 0.78:
            out.append(rng.choice(dirs) + "/")
        elif roll < 0.9:
            path = rng.choice([p for p in paths if "/" in p and "." in p.rsplit("/", 1)[1]])
            out.append(path.rsplit("/", 1)[0] + "/*." + path.rsplit(".", 1)[1])
        elif roll < 0.95:
            out.append(rng.choice(dirs) + "/**/*." + rng.choice(exts))
        elif roll < 0.98:
            out.append("**/*." + rng.choice(exts))
        else:
            out.append(rng.choice(dirs) + "/*/" + rng.choice(["*", "*.py", "main.yml"]))
    return [normalize_pattern(pattern) for pattern in out]


def test_the_index_finds_exactly_what_a_pairwise_scan_finds_on_real_paths() -> None:
    paths = _ansible_paths()
    rng = random.Random(20261101)
    patterns = _claim_patterns(paths, rng, 1200)
    entries = [(f"claim-{i // 2:04d}", pattern) for i, pattern in enumerate(patterns)]
    index = _index(entries)
    queries = [*_claim_patterns(paths, rng, 150), "**", "lib/**", "**/*.py", "*"]
    for query in queries:
        expected = _brute(entries, query)
        assert index.overlapping(query) == expected, query
        assert {key for key, _, _ in expected} <= index.candidates(query)

    # Shrink the index and compare again: removal keeps the trie consistent.
    for key, pattern in entries[::3]:
        index.remove(key, pattern)
    remaining = [entry for n, entry in enumerate(entries) if n % 3]
    assert len(index) == len(set(remaining))
    for query in queries[:60]:
        assert index.overlapping(query, exclude="claim-0001") == _brute(
            remaining, query, exclude="claim-0001"
        )


def test_the_index_prunes_most_entries_for_an_exact_path_query() -> None:
    paths = _ansible_paths()
    rng = random.Random(7)
    entries = [(f"c{i}", pattern) for i, pattern in enumerate(_claim_patterns(paths, rng, 2000))]
    index = _index(entries)
    query = "lib/ansible/modules/copy.py"
    assert len(index.candidates(query)) < len(entries) // 10


_PATTERN_POOL = [
    "a/b.py",
    "a/c.yml",
    "a/**",
    "a/*.py",
    "a/b/**",
    "a/b/c.py",
    "**/*.py",
    "**/*.yml",
    "*",
    "**",
    "b/**/x.py",
    "[ab]/*",
    "a/?.py",
    "b/x.py",
]


@settings(max_examples=150, deadline=None)
@given(
    operations=st.lists(
        st.tuples(
            st.booleans(), st.sampled_from(["k1", "k2", "k3"]), st.sampled_from(_PATTERN_POOL)
        ),
        max_size=25,
    ),
    query=st.sampled_from(_PATTERN_POOL),
)
def test_any_sequence_of_adds_and_removes_keeps_the_index_exact(
    operations: list[tuple[bool, str, str]], query: str
) -> None:
    index = PatternIndex()
    live: set[tuple[str, str]] = set()
    for add, key, pattern in operations:
        if add:
            index.add(key, pattern)
            live.add((key, pattern))
        elif (key, pattern) in live:
            index.remove(key, pattern)
            live.discard((key, pattern))
    assert len(index) == len(live)
    assert list(index) == sorted(live)
    assert index.overlapping(query) == _brute(sorted(live), query)
    for everything in ("**", "**/*.py", "a/**/*.py"):  # the views of the entries below
        assert index.overlapping(everything) == _brute(sorted(live), everything)
    assert index.candidates("**") == {key for key, _ in live}


def test_a_directory_query_takes_every_entry_below_it_with_that_entrys_own_witness() -> None:
    index = _index(
        [
            ("c1", "t/a/x.yml"),
            ("c2", "t/a/*.py"),
            ("c2", "t/b/**"),
            ("c3", "t/*.md"),
            ("c4", "t"),
            ("c5", "**/*.yml"),
            ("c6", "u/x.py"),
        ]
    )
    expected = [
        ("c1", "t/a/x.yml", "t/a/x.yml"),
        ("c2", "t/a/*.py", "t/a/x.py"),
        ("c2", "t/b/**", "t/b/x"),
        ("c3", "t/*.md", "t/x.md"),
        ("c5", "**/*.yml", "t/x.yml"),
    ]
    assert index.overlapping("t/**") == expected
    assert index.overlapping("t/**", exclude="c2") == [e for e in expected if e[0] != "c2"]
    index.remove("c2", "t/a/*.py")
    index.remove_key("c1")
    assert index.overlapping("t/**") == [
        e for e in expected if e[1] not in ("t/a/*.py", "t/a/x.yml")
    ]
    assert index.overlapping("t/a/**") == [("c5", "**/*.yml", "t/a/x.yml")]


_DEEP_POOL = [*_PATTERN_POOL, "a/b/c/**", "a/b/*.yml", "a/b/c/d.py", "b/**", "a/b/c/*"]


@settings(max_examples=150, deadline=None)
@given(
    entries=st.lists(
        st.tuples(
            st.sampled_from(["k1", "k2", "k3", "k4"]),
            st.sampled_from(_DEEP_POOL),
            st.lists(st.sampled_from(["a/b/**", "a/b/c.py", "**/*.py", "a/x.py"]), max_size=2),
        ),
        max_size=20,
    ),
    query=st.sampled_from(["**", "a/**", "a/b/**", "a/b/c/**", "b/**", "a/*.py", "**/*.py"]),
    exclude=st.sampled_from([None, "k1", "k2"]),
)
def test_directory_queries_agree_with_a_pairwise_scan_with_carve_outs_and_exclusions(
    entries: list[tuple[str, str, list[str]]], query: str, exclude: str | None
) -> None:
    index = PatternIndex()
    cuts_of: dict[tuple[str, str], list[str]] = {}
    for key, pattern, cuts in entries:
        canonical = normalize_pattern(pattern)
        if (key, canonical) not in cuts_of:
            index.add(key, pattern, carve_outs=cuts)
            cuts_of[(key, canonical)] = cuts
    expected = []
    for (key, theirs), cuts in sorted(cuts_of.items()):
        if key == exclude:
            continue
        witness = intersect_carved(query, [], theirs, cuts) if cuts else intersect(query, theirs)
        if witness is not None:
            expected.append((key, theirs, witness))
    assert index.overlapping(query, exclude=exclude) == expected
