"""Generated-artifact patterns read from .gitattributes and detente.toml."""

from __future__ import annotations

from detente.domain.overlap.trees import Artifact
from detente.vcs.trees import (
    gitattributes_generated,
    gitattributes_rules,
    toml_artifacts,
    toml_generated,
)


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


def test_a_nested_gitattributes_pattern_is_relative_to_its_directory() -> None:
    text = b"*.js linguist-generated\n/api.json linguist-generated\nsub/x.ts -linguist-generated\n"
    assert gitattributes_rules(text, "web/dist") == [
        ("web/dist/**/*.js", True),
        ("web/dist/api.json", True),
        ("web/dist/sub/x.ts", False),
    ]


def test_first_class_artifacts_name_their_generator_inputs_and_bad_entries_are_skipped() -> None:
    text = (
        b'[[generated.artifacts]]\npath = "docs/openapi.json"\ninputs = ["src/api/**", 3]\n'
        b'[[generated.artifacts]]\npath = "x.json"\ninputs = []\n'
        b'[[generated.artifacts]]\ninputs = ["a/**"]\n'
    )
    assert toml_artifacts(text) == [Artifact("docs/openapi.json", ("src/api/**",))]
    assert toml_artifacts(b'[generated]\nartifacts = "no"\n') == []
