"""Lexical search over claims and memory sections."""

from __future__ import annotations

from dashboard_records import claim

from detente.dashboard.search import search, terms


def test_terms_split_words_and_keep_paths_whole() -> None:
    assert terms('retry "src/app/**", Auth') == ["retry", "src/app/**", "auth"]


def test_claims_rank_by_how_many_terms_they_match_in_objective_targets_and_contracts() -> None:
    both = claim("a", ["src/pay/**"], objective="retry payments", expectedContractChanges=["auth"])
    one = claim("b", ["src/auth/**"], objective="rename things")
    none = claim("c", ["docs/"], objective="typos")

    found = search("retry auth", [one, both, none], [])

    assert [(h["claim"]["id"], h["score"]) for h in found["claims"]] == [("a", 2), ("b", 1)]
    assert found["mode"] == "lexical"


def test_memory_sections_are_found_by_title_and_an_empty_query_finds_nothing() -> None:
    doc = {
        "path": "AGENTS.md",
        "sections": [{"key": "build", "title": "Build"}, {"key": "style", "title": "Style"}],
    }

    found = search("build", [], [doc])

    assert [h["section"]["key"] for h in found["sections"]] == ["build"]
    assert search("  ", [claim("a", ["x"])], [doc])["claims"] == []
