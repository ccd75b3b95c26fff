"""The claim fold's lookups: live workspaces, reverse semantic records, the objective journal.

They replace walks over every claim on the open path, so each must give the answers the
walk gave: who holds a branch or worktree, who named a claim as similar, which holding
objectives changed since a reader last looked.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from detente.domain.claims.commands import ChangeObjective, RenewLease, SetStatus
from detente.domain.claims.decide import decide_renew, decide_status
from detente.domain.claims.lookups import ClaimLookups
from detente.domain.claims.model import ClaimStatus, SemanticRecord
from detente.domain.claims.objective import decide_objective_change
from detente.domain.claims.opening import decide_open
from detente.domain.events import Event
from detente.domain.state import RepoState
from detente.errors import BranchInUse

from support import counting_ids, seed

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def fold(state: RepoState, events: list[Event]) -> None:
    for e in events:
        state.apply(e.type, e.data, at=NOW, event_id=e.id, subject=e.subject)


def _open(state: RepoState, ids: object, *paths: str, **kw: object) -> str:
    events = decide_open(state, seed(*paths, **kw), NOW, ids)  # type: ignore[arg-type]
    fold(state, events)
    return str(events[0].data["claimId"])


def _abandon(state: RepoState, ids: object, claim_id: str) -> None:
    claim = state.claims[claim_id]
    cmd = SetStatus(claim_id, claim.revision, ClaimStatus.ABANDONED, reason="done")
    fold(state, decide_status(state, cmd, NOW, ids))  # type: ignore[arg-type]


def test_a_live_claims_branch_and_worktree_are_refused_to_the_next_claim_until_it_ends() -> None:
    state, ids = RepoState("demo"), counting_ids()
    first = _open(state, ids, "a/**", branch="refs/heads/feat", worktree="/w/one/../feat")
    assert state.claims.lookups.branches == {"feat": {first}}
    assert state.claims.lookups.worktrees == {"/w/feat": {first}}

    with pytest.raises(BranchInUse) as on_branch:
        decide_open(state, seed("b/**", branch="feat"), NOW, ids)
    assert on_branch.value.extra["claimId"] == first
    assert "branch 'feat'" in str(on_branch.value)
    with pytest.raises(BranchInUse) as in_worktree:
        decide_open(state, seed("b/**", branch="other", worktree="/w/feat"), NOW, ids)
    assert in_worktree.value.extra == {"holder": "/w/feat", "claimId": first}

    _abandon(state, ids, first)
    assert state.claims.lookups.branches == {} and state.claims.lookups.worktrees == {}
    second = _open(state, ids, "b/**", branch="feat", worktree="/w/feat")
    assert state.claims.lookups.branches == {"feat": {second}}


def test_the_journal_names_each_claim_whose_holding_objective_changed_since_an_epoch() -> None:
    state, ids = RepoState("demo"), counting_ids()
    a = _open(state, ids, "a/**")
    b = _open(state, ids, "b/**")
    journal = state.claims.lookups
    seen = journal.objective_epoch
    assert list(journal.objective_changes_since(0)) == [b, a]

    claim = state.claims[a]
    renew = RenewLease(a, claim.lease.revision, claim.revision, 120)
    fold(state, decide_renew(state, renew, NOW, ids))
    assert list(journal.objective_changes_since(seen)) == []  # a renewal changes no objective

    change = ChangeObjective(a, state.claims[a].revision, "a new objective for a")
    fold(state, decide_objective_change(state, change, NOW, ids))
    _abandon(state, ids, b)
    c = _open(state, ids, "c/**")
    assert list(journal.objective_changes_since(seen)) == [c, b, a]
    assert list(journal.objective_changes_since(journal.objective_epoch)) == []


def test_the_reverse_semantic_lookup_follows_the_records_stored_on_claims() -> None:
    state, ids = RepoState("demo"), counting_ids()
    a = _open(state, ids, "a/**")
    events = decide_open(state, seed("b/**"), NOW, ids)
    record = {"mode": "lexical", "threshold": 0.2, "similar": [{"claimId": a, "score": 0.5}]}
    events[0] = Event(
        events[0].id, events[0].type, events[0].subject, {**events[0].data, "semantic": record}
    )
    fold(state, events)
    b = str(events[0].data["claimId"])
    assert state.claims.lookups.similar_to == {a: {b}}

    change = ChangeObjective(b, state.claims[b].revision, "something else entirely")
    fold(state, decide_objective_change(state, change, NOW, ids))
    assert state.claims.lookups.similar_to == {}


def test_lookups_rebuilt_from_the_final_claims_equal_the_ones_kept_along_the_way() -> None:
    state, ids = RepoState("demo"), counting_ids()
    opened = [_open(state, ids, f"p{i}/**", branch=f"b{i}", worktree=f"/w/{i}") for i in range(6)]
    for claim_id in opened[::2]:
        _abandon(state, ids, claim_id)
    rebuilt = ClaimLookups()
    for claim in state.claims.values():
        rebuilt.update(None, claim)
    assert rebuilt.branches == state.claims.lookups.branches
    assert rebuilt.worktrees == state.claims.lookups.worktrees
    assert set(rebuilt.branches) == {f"b{i}" for i in range(1, 6, 2)}


def test_a_stored_semantic_record_folds_into_a_record_naming_each_claim_by_its_own_id() -> None:
    state, ids = RepoState("demo"), counting_ids()
    a = _open(state, ids, "a/**")
    events = decide_open(state, seed("b/**"), NOW, ids)
    record = {
        "mode": "lexical",
        "threshold": 0.2,
        "similar": [
            {"claimId": "".join(a), "score": 0.5},  # an equal string, not the same object
            {"claimId": "gone", "score": 1},
            {"claimId": a},  # no score: skipped, as is what is not an entry at all
            "not an entry",
        ],
        "at": "2026-11-01T00:00:00Z",
    }
    events[0] = Event(
        events[0].id, events[0].type, events[0].subject, {**events[0].data, "semantic": record}
    )
    fold(state, events)
    stored = state.claims[str(events[0].data["claimId"])].semantic

    assert stored == SemanticRecord("lexical", 0.2, ((a, 0.5), ("gone", 1.0)), at=record["at"])
    assert stored is not None and stored.similar[0][0] is state.claims[a].id
