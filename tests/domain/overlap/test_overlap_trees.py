"""Tree-aware verdicts on path overlaps (pure)."""

from __future__ import annotations

from detente.domain.overlap.trees import Artifact, TreeView, Verdict, judge

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


def test_a_missing_literal_path_is_literal_against_any_side_and_a_missing_glob_pair_is_not() -> (
    None
):
    assert judge(("src/new.py",), ("src/new.py",), "src/new.py", [TREE])[0] is Verdict.LITERAL
    assert judge(("src/new.py",), ("src/*.py",), "src/new.py", [TREE])[0] is Verdict.LITERAL
    assert judge(("src/**",), ("src/new.py",), "src/new.py", [TREE])[0] is Verdict.LITERAL
    assert judge(("src/*.py",), ("src/n*.py",), "src/new.py", [TREE])[0] is Verdict.POTENTIAL


def test_a_gitlink_is_a_path_a_directory_pattern_of_its_name_covers() -> None:
    tree = TreeView(commit="c4", files=("README.md", "vendor/lib"))
    assert judge(("vendor/**",), ("vendor/lib/**",), "vendor/lib/x", [tree]) == (
        Verdict.EXISTING,
        "vendor/lib",
    )


def test_generated_files_are_never_witnesses() -> None:
    assert judge(("gen/**",), ("**/*.ts",), "gen/a.ts", [TREE])[0] is Verdict.GENERATED
    assert judge(("**",), ("**/*.ts",), "a.ts", [TREE])[0] is Verdict.POTENTIAL


def test_without_a_tree_the_glob_witness_stands() -> None:
    assert judge(("a/**",), ("a/b",), "a/b", []) == (Verdict.UNKNOWN, "a/b")


def test_the_last_matching_rule_decides_so_a_nested_unset_wins() -> None:
    tree = TreeView(
        commit="c2",
        files=("vendor/a.js", "web/a.js"),
        rules=(("**/*.js", True), ("vendor/**/*.js", False)),
    )
    assert tree.is_generated("web/a.js")
    assert not tree.is_generated("vendor/a.js")
    assert judge(("vendor/**",), ("**/*.js",), "vendor/b.js", [tree]) == (
        Verdict.EXISTING,
        "vendor/a.js",
    )
    assert judge(("web/**",), ("**/*.js",), "web/b.js", [tree])[0] is Verdict.GENERATED


def test_a_first_class_artifact_is_generated_and_names_its_inputs() -> None:
    tree = TreeView(
        commit="c3", files=("docs/openapi.json",), artifacts=(Artifact("docs/*.json", ("api/**",)),)
    )
    assert tree.is_generated("docs/openapi.json")
    assert tree.artifact("docs/openapi.json") == Artifact("docs/*.json", ("api/**",))
    assert tree.artifact("docs/readme.md") is None
