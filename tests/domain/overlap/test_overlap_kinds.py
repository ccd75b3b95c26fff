"""Which kind labels an overlap found through several kinds of target at once (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

from detente.domain.claims.opening import decide_open
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.model import OverlapKind
from detente.domain.state import RepoState

from support import counting_ids, seed

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def test_a_contract_overlap_found_with_a_module_overlap_is_labelled_contract_both_kinds_kept() -> (
    None
):
    state = RepoState("demo")
    for e in decide_open(
        state,
        seed(agent="alice", modules=("pkg.billing",), expected_contract_changes=("billing api",)),
        NOW,
        counting_ids(),
    ):
        state.apply(e.type, e.data, at=NOW, event_id=e.id, subject=e.subject)

    [overlap] = find_overlaps(state, Targets(modules=("pkg.billing",), contracts=("billing api",)))

    assert overlap.kind is OverlapKind.CONTRACT
    assert set(overlap.kinds) == {OverlapKind.CONTRACT, OverlapKind.MODULE}
