"""CODEOWNERS with GitHub semantics: last match wins, no negation, no ranges."""

from __future__ import annotations

from pathlib import Path

from detente.security.codeowners import load, parse


def test_a_single_star_does_not_reach_into_subdirectories() -> None:
    rules = parse("docs/* @a\n")
    assert rules.owners("docs/x.md") == ["@a"]
    assert rules.owners("docs/x/y.md") == []


def test_a_directory_pattern_matches_that_directory_anywhere() -> None:
    assert parse("config/ @b\n").owners("svc/config/s.yaml") == ["@b"]


def test_the_last_matching_line_wins() -> None:
    rules = parse("* @everyone\nsrc/ @src-team\nsrc/vendor/ @vendor\n")
    assert rules.owners("src/vendor/lib.py") == ["@vendor"]
    assert rules.owners("src/app.py") == ["@src-team"]
    assert rules.owners("README.md") == ["@everyone"]


def test_negation_and_character_ranges_are_reported_invalid_not_guessed() -> None:
    rules = parse("* @all\n!secret.txt @nobody\nfile[0-9].py @digits\n")
    assert len(rules.invalid_lines) == 2
    assert "CODEOWNERS:2" in rules.invalid_lines[0] and "negation" in rules.invalid_lines[0]
    assert "CODEOWNERS:3" in rules.invalid_lines[1] and "ranges" in rules.invalid_lines[1]
    assert rules.owners("file1.py") == ["@all"]
    assert rules.owners("secret.txt") == ["@all"]


def test_github_lookup_order_prefers_the_dot_github_file(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / ".github").mkdir()
    (tmp_path / "docs" / "CODEOWNERS").write_text("* @docs\n")
    (tmp_path / "CODEOWNERS").write_text("* @root\n")
    assert load(tmp_path).owners("x") == ["@root"]
    (tmp_path / ".github" / "CODEOWNERS").write_text("* @gh\n")
    assert load(tmp_path).source == ".github/CODEOWNERS"
    assert load(tmp_path).owners("x") == ["@gh"]


def test_no_codeowners_file_means_no_owners(tmp_path: Path) -> None:
    rules = load(tmp_path)
    assert rules.source is None and rules.owners_of(["a.py"]) == ([], [])
