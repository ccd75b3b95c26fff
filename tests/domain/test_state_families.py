"""A repository's state loads the meeting, memory, gate and check families with their
first record: a state that never met one answers as if it were empty, and a batch of
agent session events sets off no reaction, so a write that only renews a session never
needs the reactions either (both keep a hook call in local mode light)."""

from __future__ import annotations

import json
import subprocess
import sys

from detente.domain import events as ev
from detente.domain.agents.commands import RecordNotices, RegisterAgent
from detente.domain.agents.decide import decide_notices, decide_register
from detente.domain.meetings.reactions import react
from detente.domain.settle import settle
from detente.domain.state import RepoState

from decisions import given, open_claim

_FAMILIES = (
    "detente.domain.meetings.evolve",
    "detente.domain.meetings.model",
    "detente.domain.memory.model",
    "detente.domain.gates.model",
    "detente.domain.checks.model",
    "detente.domain.resources.model",
)

_FOLD = """
import json, sys
from datetime import UTC, datetime
from detente.domain.state import RepoState
state = RepoState("demo")
for seq, (kind, data, subject) in enumerate(json.loads(sys.stdin.read()), start=1):
    state.apply(kind, data, at=datetime(2026, 1, 1, tzinfo=UTC), event_id=f"evt_{seq}",
                seq=seq, subject=subject)
print(json.dumps([len(state.claims), state.has_meetings(), state.has_memory(),
                  sorted(m for m in %r if m in sys.modules)]))
"""


def test_a_state_folded_from_claims_alone_loads_none_of_the_other_families() -> None:
    g = given()
    history = []
    for claim_id, path in (("clm_a", "src/a.py"), ("clm_b", "src/b.py")):
        events = g._decide(open_claim(claim_id, path, agent=claim_id, ttl=3600))
        g.fold(events)
        history += [(e.type, e.data, e.subject) for e in events]

    done = subprocess.run(
        [sys.executable, "-c", _FOLD % (_FAMILIES,)],
        input=json.dumps(history),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert json.loads(done.stdout) == [2, False, False, []]


def test_an_unloaded_family_reads_as_an_empty_one_and_loads_on_first_use() -> None:
    state = RepoState("demo")

    assert not state.has_meetings() and not state.has_memory()
    assert dict(state.meetings) == {} and state.meetings.first_deadline() is None
    assert state.memory.get("AGENTS.md") is None
    assert not state.gates.patches and not state.gates.environments
    assert state.resources == {}


def test_a_meeting_event_loads_the_meeting_family() -> None:
    g = given(
        open_claim("clm_a", "pkg/**", agent="a", ttl=3600),
        open_claim("clm_b", "pkg/f.py", agent="b", ttl=3600),
    )

    assert g.state.has_meetings()
    assert len(g.state.meetings.open_ids) == 1


def test_a_batch_of_agent_session_events_sets_off_no_reaction() -> None:
    g = given(open_claim("clm_dir", "pkg/**", agent="d", ttl=3600))
    for i in range(3):
        g.and_(open_claim(f"clm_{i}", f"pkg/f{i}.py", agent=f"a{i}", ttl=3600))
    assert g.state.meetings.open_ids  # a room in flight: a touched party could move
    now, ids, policy = g.context.now, g.context.ids, g.context.policy
    register = RegisterAgent("demo", "claude-s1", "alice", 600, intent="edit pkg")
    events = decide_register(g.state, register, now, ids, policy)
    for e in events:
        g.state.apply(e.type, e.data, at=now, event_id=e.id, seq=g.state.last_seq + 1)
    events += decide_notices(
        g.state, RecordNotices("claude-s1", "delivered", g.state.last_seq), ids
    )
    batch = [(e.type, e.data) for e in events]

    assert {t for t, _ in batch} == {ev.AGENT_REGISTERED, ev.AGENT_NOTICES_RECEIVED}
    assert all(t.startswith(ev.AGENT_PREFIX) for t, _ in batch)
    assert react(g.state, batch, ids, now, policy) == []
    assert settle(g.state, batch, ids, now, policy, whole=True) == []
