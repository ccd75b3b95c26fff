"""An opening's settle round and its answer's view share one overlap analysis of the
new claim: ``claim_overlaps`` remembers it per claim record until the state folds an
event, and answers what ``find_overlaps`` answers."""

from __future__ import annotations

import pickle

from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.remembered import claim_overlaps

from decisions import given, open_claim


def test_it_answers_what_a_fresh_analysis_answers() -> None:
    g = given(
        open_claim("clm_a", "src/**", ttl=3600),
        open_claim("clm_b", "src/a.py", agent="b"),
        open_claim("clm_c", "src/*.py", agent="c"),
    )
    for claim in g.state.claims.values():
        fresh = find_overlaps(g.state, Targets.of(claim), exclude=claim.id)
        assert claim_overlaps(g.state, claim) == fresh
        assert claim_overlaps(g.state, claim) == fresh  # the remembered answer


def test_it_is_remembered_until_the_state_folds_an_event() -> None:
    g = given(open_claim("clm_a", "src/**", ttl=3600), open_claim("clm_b", "src/a.py", agent="b"))
    a = g.state.claims["clm_a"]
    assert [o.claim_id for o in claim_overlaps(g.state, a)] == ["clm_b"]
    assert g.state.overlap_memo is not None and "clm_a" in g.state.overlap_memo[2]
    g.and_(open_claim("clm_c", "src/b.py", agent="c"))
    assert g.state.claims["clm_a"] is a  # the same record: only the fold tells
    assert [o.claim_id for o in claim_overlaps(g.state, a)] == ["clm_b", "clm_c"]


def test_a_caller_changing_its_answer_changes_nothing_remembered() -> None:
    g = given(open_claim("clm_a", "src/**", ttl=3600), open_claim("clm_b", "src/a.py", agent="b"))
    a = g.state.claims["clm_a"]
    claim_overlaps(g.state, a).clear()
    assert [o.claim_id for o in claim_overlaps(g.state, a)] == ["clm_b"]


def test_a_snapshot_of_the_state_leaves_the_memo_out() -> None:
    g = given(open_claim("clm_a", "src/**", ttl=3600), open_claim("clm_b", "src/a.py", agent="b"))
    claim_overlaps(g.state, g.state.claims["clm_a"])
    assert pickle.loads(pickle.dumps(g.state)).overlap_memo is None
