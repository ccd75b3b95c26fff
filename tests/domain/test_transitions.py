"""The claim state machine table: every move is either allowed or invalid_transition."""

from __future__ import annotations

import itertools

import pytest

from detente.domain.claims.model import ClaimStatus as S
from detente.domain.claims.transitions import TERMINAL, TRANSITIONS, allowed, require
from detente.errors import InvalidTransition


def test_the_table_covers_all_twelve_statuses() -> None:
    assert set(TRANSITIONS) == set(S) and len(S) == 12


def test_completed_and_taken_over_are_the_only_terminal_statuses() -> None:
    assert {S.COMPLETED, S.TAKEN_OVER} == TERMINAL


def test_an_expired_claim_can_never_become_live_again() -> None:
    assert TRANSITIONS[S.EXPIRED] == {S.ABANDONED, S.TAKEN_OVER}


@pytest.mark.parametrize(("src", "dst"), list(itertools.product(S, S)))
def test_every_pair_is_allowed_by_the_table_or_refused_naming_from_and_to(src: S, dst: S) -> None:
    if allowed(src, dst):
        require(src, dst)
        return
    with pytest.raises(InvalidTransition) as info:
        require(src, dst, claim_id="clm_x")
    assert info.value.extra["from"] == src.value and info.value.extra["to"] == dst.value
    assert src.value in info.value.detail and dst.value in info.value.detail
