"""The agent registry and readiness, on the memory and SQLite stores (``service`` fixture)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from detente.clock import FakeClock, format_time
from detente.domain.agents.commands import RegisterAgent
from detente.domain.claims.commands import OpenClaim, SetStatus
from detente.domain.claims.model import Agent, ClaimStatus
from detente.errors import NotFoundError, ValidationError
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore

from support import counting_ids, seed


def register(session: str, name: str = "alice", ttl: int = 60, **kw: str) -> RegisterAgent:
    return RegisterAgent(
        repo="demo", session_id=session, agent_name=name, ttl_seconds=ttl, intent="work", **kw
    )


def held(*paths: str, session_id: str, agent: str = "alice", **kw: object) -> OpenClaim:
    """A claim on ``paths`` by ``agent`` in session ``session_id``."""
    cmd = seed(*paths, agent=agent, **kw)
    return replace(cmd, agent=Agent(id=agent, name=agent, session_id=session_id))


def test_a_registered_session_is_listed_active_with_an_absolute_deadline(
    service: Service, clock: FakeClock
) -> None:
    view = service.agents.register_agent(register("s1", branch="feat/x", worktree="/w/x"))
    assert view.status == "active"
    assert view.session.expires_at == clock.now() + timedelta(seconds=60)
    [listed] = service.agents.list_agents(repo="demo")
    wire = listed.to_wire()
    assert wire["sessionId"] == "s1" and wire["agentName"] == "alice"
    assert wire["branch"] == "feat/x" and wire["worktree"] == "/w/x" and wire["intent"] == "work"
    assert wire["status"] == "active" and wire["expiresAt"] == format_time(view.session.expires_at)


def test_a_session_departs_when_its_ttl_passes_and_re_registering_renews_it(
    service: Service, clock: FakeClock
) -> None:
    service.agents.register_agent(register("s1", ttl=30))
    clock.advance(30)
    assert service.agents.get_agent("s1").status == "departed"
    assert [a.session.session_id for a in service.agents.list_agents(status="departed")] == ["s1"]
    renewed = service.agents.register_agent(replace(register("s1", ttl=30), intent="round two"))
    assert renewed.status == "active" and renewed.session.revision == 2
    assert renewed.session.intent == "round two"
    assert renewed.session.registered_at < renewed.session.updated_at
    assert service.agents.list_agents(status="departed") == []


def test_readiness_is_caution_naming_another_sessions_claim_and_ignores_ones_own(
    service: Service,
) -> None:
    holder = service.claims.open_claim(held("docs/**", agent="alice", session_id="s1"))
    theirs = service.agents.readiness("s2", ["docs/foo.md", "src/x.py"])
    assert theirs.readiness == "caution"
    [entry] = theirs.overlapping
    assert (entry.claim_id, entry.session_id, entry.agent_name) == (holder.claim.id, "s1", "alice")
    assert entry.paths == ("docs/**",) and entry.witness == "docs/foo.md"
    assert entry.reason == holder.claim.objective
    assert service.agents.readiness("s1", ["docs/foo.md"]).readiness == "ready"


def test_readiness_agrees_with_claim_check_when_the_sessions_own_claim_is_negotiating(
    service: Service,
) -> None:
    service.claims.open_claim(held("docs/**", agent="alice", session_id="s1"))
    waiting = service.claims.open_claim(held("docs/foo.md", agent="bob", session_id="s2"))
    assert waiting.claim.status is ClaimStatus.NEGOTIATING

    answer = service.agents.readiness("s2", ["docs/foo.md"])

    assert answer.readiness == "caution"
    assert waiting.claim.id in [e.claim_id for e in answer.overlapping]
    mine = next(e for e in answer.overlapping if e.claim_id == waiting.claim.id)
    assert mine.status is ClaimStatus.NEGOTIATING
    assert service.agents.readiness("s2", ["src/x.py"]).readiness == "ready"


def test_expiry_releases_an_advisory_claim_but_a_protocol_claim_stays_frozen(
    service: Service, clock: FakeClock
) -> None:
    service.claims.open_claim(held("a.py", agent="alice", session_id="s1", ttl=10, advisory=True))
    service.claims.open_claim(held("b.py", agent="bob", session_id="s3", ttl=10))
    clock.advance(10)
    assert service.agents.readiness("s2", ["a.py"]).readiness == "ready"
    frozen = service.agents.readiness("s2", ["b.py"])
    assert frozen.readiness == "caution"
    assert frozen.overlapping[0].status is ClaimStatus.EXPIRED


def test_abandoning_the_claim_restores_ready(service: Service) -> None:
    view = service.claims.open_claim(held("a.py", session_id="s1", advisory=True))
    assert service.agents.readiness("s2", ["a.py"]).readiness == "caution"
    service.claims.set_status(SetStatus(view.claim.id, view.claim.revision, ClaimStatus.ABANDONED))
    assert service.agents.readiness("s2", ["a.py"]).readiness == "ready"


def test_an_agent_lists_the_claims_its_session_still_holds(service: Service) -> None:
    service.agents.register_agent(register("s1"))
    mine = service.claims.open_claim(held("a.py", session_id="s1"))
    service.claims.open_claim(held("b.py", session_id="s2"))
    assert service.agents.get_agent("s1").claim_ids == [mine.claim.id]


@pytest.mark.parametrize(
    ("cmd", "field"),
    [
        (register("bad id"), "sessionId"),
        (register("s1", name=" "), "agentName"),
        (register("s1", ttl=0), "ttlSeconds"),
        (replace(register("s1"), repo="elsewhere"), "repo"),
    ],
)
def test_a_bad_registration_is_a_validation_error_naming_the_field(
    service: Service, cmd: RegisterAgent, field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        service.agents.register_agent(cmd)
    assert caught.value.field == field
    assert service.agents.list_agents() == []


def test_readiness_refuses_only_malformed_input(service: Service) -> None:
    for session, paths, field in (("s 1", ["a"], "sessionId"), ("s1", ["../a"], "paths[0]")):
        with pytest.raises(ValidationError) as caught:
            service.agents.readiness(session, paths)
        assert caught.value.field == field
    with pytest.raises(NotFoundError):
        service.agents.get_agent("nobody")


def test_a_session_id_belongs_to_one_repository(clock: FakeClock) -> None:
    service = Service(
        MemoryStore(), clock, [RepoConfig("one"), RepoConfig("two")], ids=counting_ids()
    )
    service.agents.register_agent(replace(register("s1"), repo="one"))
    with pytest.raises(ValidationError) as caught:
        service.agents.register_agent(replace(register("s1"), repo="two"))
    assert caught.value.field == "sessionId"
    with pytest.raises(ValidationError) as unnamed:
        service.agents.register_agent(replace(register("s2"), repo=""))
    assert unnamed.value.field == "repo"
    # Readiness finds the session's repository by itself.
    service.claims.open_claim(held("a.py", repo="one", session_id="s9"))
    assert service.agents.readiness("s1", ["a.py"]).readiness == "caution"


def test_agent_records_are_projected_and_the_audit_replays_them(
    service: Service, clock: FakeClock
) -> None:
    service.agents.register_agent(register("s1"))
    clock.advance(5)
    service.agents.register_agent(register("s1", ttl=120))
    [row] = service.store.records("agent")
    assert (row.id, row.repo, row.revision) == ("s1", "demo", 2)
    assert row.body["ttlSeconds"] == 120 and "status" not in row.body
    assert service.audit().ok
