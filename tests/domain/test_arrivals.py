"""An opening judges again only what it may move: the claims its targets meet and the
rooms it joined or opened, to the very events the whole round would decide."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence

from detente.domain.arrivals import arrival
from detente.domain.claims.commands import SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.domain.events import Event
from detente.domain.invariants import state_violations
from detente.domain.live_contests import BlockerMemo
from detente.domain.meetings.reactions import react
from detente.domain.settle import settle

from decisions import Given, given, open_claim


def _counting() -> Callable[[str], str]:
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(counter):06d}"


def _fold_comparing(g: Given, events: Sequence[Event], seen: dict[str, int]) -> None:
    """Fold ``events`` with their reactions as :meth:`Given.fold` does, and before each
    round check that the settle round after an arrival decides what the whole one does."""
    batch = list(events)
    for _ in range(16):
        if not batch:
            return
        for e in batch:
            seq = g.state.last_seq + 1
            g.state.apply(
                e.type, e.data, at=g.context.now, event_id=e.id, seq=seq, subject=e.subject
            )
        pairs = [(e.type, e.data) for e in batch]
        now, policy = g.context.now, g.context.policy
        whole = settle(g.state, pairs, _counting(), now, policy, whole=True)
        short = settle(g.state, pairs, _counting(), now, policy)
        assert [(e.type, e.data) for e in short] == [(e.type, e.data) for e in whole]
        came = arrival(g.state, pairs, (), BlockerMemo(g.state))
        seen["arrivals"] += came is not None
        seen["decided"] += bool(whole)
        batch = react(g.state, pairs, g.context.ids, now, policy)
    raise AssertionError("reactions did not settle")


def _pattern(rng: random.Random) -> str:
    folder = f"pkg{rng.randrange(3)}/mod{rng.randrange(2)}"
    roll = rng.random()
    if roll < 0.7:
        return f"{folder}/f{rng.randrange(6)}.py"
    return f"{folder}/**" if roll < 0.9 else f"{folder}/*.py"


def test_an_opening_into_a_crowded_room_judges_only_the_claims_it_meets() -> None:
    g = given(open_claim("clm_dir", "pkg/**", agent="d", ttl=3600))
    for i in range(30):
        g.and_(open_claim(f"clm_{i:02d}", f"pkg/f{i}.py", agent=f"a{i}", ttl=3600))
    [room] = sorted(g.state.meetings.open_ids)
    assert len(g.state.meetings[room].participants) == 31
    events = g._decide(open_claim("clm_new", "pkg/f3.py", agent="n", ttl=3600))
    for e in events:
        seq = g.state.last_seq + 1
        g.state.apply(e.type, e.data, at=g.context.now, event_id=e.id, seq=seq, subject=e.subject)
    pairs = [(e.type, e.data) for e in events]
    came = arrival(g.state, pairs, (), BlockerMemo(g.state))
    assert came is not None
    assert came.related == {"clm_new", "clm_dir", "clm_03"}
    assert came.to_judge(g.state, g.state.meetings[room].participants) <= came.related
    now, policy = g.context.now, g.context.policy
    assert settle(g.state, pairs, _counting(), now, policy) == settle(
        g.state, pairs, _counting(), now, policy, whole=True
    )


def test_a_batch_naming_two_claims_is_judged_whole() -> None:
    g = given(open_claim("clm_a", "f.py", ttl=3600), open_claim("clm_b", "f.py", agent="b"))
    a = g.state.claims["clm_a"]
    events = g._decide(SetStatus("clm_a", a.revision, ClaimStatus.ABANDONED, "gone", {}))
    g.fold(events)
    pairs = [(e.type, e.data) for e in events]
    assert arrival(g.state, pairs, (), BlockerMemo(g.state)) is None


def test_openings_and_departures_over_shared_new_paths_decide_as_the_whole_round() -> None:
    rng = random.Random(32)
    g = given()
    seen = {"arrivals": 0, "decided": 0}
    live: list[str] = []
    for step in range(160):
        if live and rng.random() < 0.25:
            claim_id = live.pop(rng.randrange(len(live)))
            claim = g.state.claims[claim_id]
            to = rng.choice([ClaimStatus.ABANDONED, ClaimStatus.COMPLETED])
            command: object = SetStatus(claim_id, claim.revision, to, "done", {})
        else:
            claim_id = f"clm_{step:03d}"
            live.append(claim_id)
            command = open_claim(claim_id, _pattern(rng), agent=f"agent{step % 7}", ttl=3600)
        try:
            events = g._decide(command)
        except Exception:  # a refused status change (say, a negotiating claim completing)
            continue
        _fold_comparing(g, events, seen)
        assert state_violations(g.state) == []
    assert seen["arrivals"] > 50
    assert seen["decided"] > 5  # departures granted waiters and dissolved rooms
