"""Tree-aware verdicts on path overlaps (pure)."""

from __future__ import annotations

from detente.domain.overlap.trees import TreeView, Verdict, judge

TREE = TreeView(
    commit="c1",
    files=("gen/api.ts", "src/a.py", "src/b/routes/x.py", "src/c/y.py"),
    generated=("gen/**",),
)


def test_an_existing_file_both_cover_is_the_witness_and_the_verdict() -> None:
    assert judge(("src/*/routes/*.py",), ("src/b/**",), "src/b/routes/aa.py", [TREE]) == (
        Verdict.EXISTING,
        "src/b/routes/x.py",
    )


def test_meeting_only_in_missing_paths_is_potential() -> None:
    verdict, witness = judge(("src/*/routes/*.py",), ("src/c/**",), "src/c/routes/a.py", [TREE])
    assert (verdict, witness) == (Verdict.POTENTIAL, "src/c/routes/a.py")


def test_the_same_missing_literal_path_is_literal_and_a_missing_glob_pair_is_not() -> None:
    assert judge(("src/new.py",), ("src/new.py",), "src/new.py", [TREE])[0] is Verdict.LITERAL
    assert judge(("src/new.py",), ("src/*.py",), "src/new.py", [TREE])[0] is Verdict.POTENTIAL


def test_generated_files_are_never_witnesses() -> None:
    assert judge(("gen/**",), ("**/*.ts",), "gen/a.ts", [TREE])[0] is Verdict.GENERATED
    assert judge(("**",), ("**/*.ts",), "a.ts", [TREE])[0] is Verdict.POTENTIAL


def test_without_a_tree_the_glob_witness_stands() -> None:
    assert judge(("a/**",), ("a/b",), "a/b", []) == (Verdict.UNKNOWN, "a/b")
