"""A claim's overlap analysis, remembered on the state until the state folds an event.

An opening's settle round (the arrival's judgement) and its answer's view ask about the
same claim on the same state; a ``dir/**`` claim among crowded rooms meets hundreds of
claims, so the second asks the first's answer.
"""

from __future__ import annotations

from detente.domain.claims.model import Claim
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.model import Overlap
from detente.domain.state import RepoState

__all__ = ["claim_overlaps"]


def claim_overlaps(state: RepoState, claim: Claim) -> list[Overlap]:
    """``find_overlaps(state, Targets.of(claim), exclude=claim.id)``, remembered per
    claim record while ``state`` folds nothing (:attr:`RepoState.folds`) and its lease
    rows stay (``lease_stamp``): an opening's settle round and its answer's view ask
    about the same claim on the same state, and a ``dir/**`` claim among crowded rooms
    meets hundreds of claims. Returns a new list each call.
    """
    memo = state.overlap_memo
    stamp = state.claims.lease_stamp
    if memo is None or memo[0] != state.folds or memo[1] != stamp:
        memo = state.overlap_memo = (state.folds, stamp, {})
    known = memo[2].get(claim.id)
    if known is not None and known[0] is claim:
        return list(known[1])
    found = find_overlaps(state, Targets.of(claim), exclude=claim.id)
    memo[2][claim.id] = (claim, found)
    return list(found)
