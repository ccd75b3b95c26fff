"""Bounded work: pattern limits, the search budget and what an undecided pair means."""

from __future__ import annotations

import pytest

from detente.domain.overlap import (
    MAX_PATTERN_LENGTH,
    MAX_WILDCARDS,
    Budget,
    PatternIndex,
    Undecided,
    intersect,
    may_overlap,
    normalize_pattern,
)
from detente.errors import ValidationError

# Subset construction blows up on "an 'a' exactly 16 characters before the end": the
# two patterns are disjoint, but proving it needs every subset of the last 16 positions.
HARD_A = "*a" + "?" * 16
HARD_B = "*b" + "?" * 16


@pytest.mark.parametrize(
    "pattern",
    ["x" + "*a" * 300 + "*", "x" + "*b" * 300 + "*", "a*" * 2000 + "b", "?" * (MAX_WILDCARDS + 1)],
)
def test_a_pattern_with_too_many_wildcards_is_a_validation_error_naming_the_field(
    pattern: str,
) -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_pattern(pattern, field="paths[0]")
    assert caught.value.field == "paths[0]"
    assert "wildcards" in caught.value.detail
    assert len(caught.value.detail) < 300  # the pattern is cut in the message


def test_a_pattern_at_the_wildcard_limit_is_accepted() -> None:
    assert normalize_pattern("?" * MAX_WILDCARDS) == "?" * MAX_WILDCARDS


def test_an_overlong_pattern_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match="characters long"):
        normalize_pattern("a" * (MAX_PATTERN_LENGTH + 1))
    assert normalize_pattern("a" * MAX_PATTERN_LENGTH) == "a" * MAX_PATTERN_LENGTH


def test_a_search_past_its_budget_is_undecided_never_disjoint() -> None:
    with pytest.raises(Undecided) as caught:
        intersect(HARD_A, HARD_B)
    assert caught.value.a == HARD_A
    assert may_overlap(HARD_A, HARD_B) is True


def test_a_small_budget_is_enough_to_find_a_witness_when_one_exists() -> None:
    # Deeper states first: the search walks straight to a word both accept.
    witness = intersect(HARD_A, "*a" + "?" * 15 + "x", budget=Budget(per_search=2_000))
    assert witness is not None and witness.endswith("x") and witness[-17] == "a"


def test_a_shared_budget_caps_the_sum_of_searches_and_then_decides_nothing_by_search() -> None:
    budget = Budget(total=5_000, per_search=5_000)
    with pytest.raises(Undecided):
        intersect(HARD_A, HARD_B, budget=budget)
    assert budget.allowance() == 0
    # Once spent, a pair that needs a search is undecided at once ...
    with pytest.raises(Undecided):
        intersect("src/*.py", "src/a*", budget=budget)
    # ... while pairs decided without a search stay exact.
    assert intersect("src/a.py", "src/*.py", budget=budget) == "src/a.py"
    assert intersect("src/*.py", "docs/*.md", budget=budget) is None


def test_the_index_lists_an_undecided_pair_with_no_witness() -> None:
    index = PatternIndex()
    index.add("c1", HARD_B)
    index.add("c2", "docs/*.md")
    assert index.overlapping(HARD_A) == [("c1", HARD_B, None)]
