"""Generated-artifact patterns read from .gitattributes and detente.toml."""

from __future__ import annotations

from detente.index.trees import gitattributes_generated, toml_generated


def test_gitattributes_patterns_without_a_slash_match_at_any_depth() -> None:
    text = (
        b"# comment\n*.pb.go linguist-generated\n/gen/** linguist-generated=true\ndocs/x.md text\n"
    )
    assert gitattributes_generated(text) == ["**/*.pb.go", "gen/**"]


def test_a_later_line_unsets_linguist_generated() -> None:
    text = b"*.js linguist-generated\n*.js -linguist-generated\n"
    assert gitattributes_generated(text) == []


def test_detente_toml_patterns_are_normalised_and_bad_ones_skipped() -> None:
    text = b'[generated]\npatterns = ["./build/", "/abs", 3, "api/*.ts"]\n'
    assert toml_generated(text) == ["build/**", "api/*.ts"]
    assert toml_generated(b"not = [toml") == []
    assert toml_generated(b'[other]\npatterns = ["x"]\n') == []
