"""A takeover successor inherits its predecessor's carve-outs and gets a semantic record."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import SetStatus, TakeoverRequest
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.meetings.commands import Resolve
from detente.domain.meetings.resolution_types import resolution_from_wire
from detente.errors import DetenteError
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from semantic_support import require_model
from source_repo import make_source_repo
from support import counting_ids, seed


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "repo"
        self.head = make_source_repo(self.root)
        self.clock = FakeClock()
        self.db = tmp_path / "d.db"
        self.service = self.restart()

    def restart(self) -> Service:
        return Service(
            SqliteStore(self.db),
            self.clock,
            [RepoConfig("demo", path=self.root)],
            ids=counting_ids(),
        )

    def open(self, *paths: str, agent: str, objective: str | None = None) -> Claim:
        self.clock.advance(1)
        cmd = replace(seed(*paths, agent=agent, ttl=3600), base_commit=self.head)
        if objective is not None:
            cmd = replace(cmd, objective=objective)
        return self.service.claims.open_claim(cmd).claim

    def abandon(self, claim: Claim) -> None:
        current = self.service.claims.get_claim(claim.id).claim
        self.service.claims.set_status(
            SetStatus(claim.id, current.revision, ClaimStatus.ABANDONED, reason="left")
        )

    def take_over(self, pred: Claim, agent: str, objective: str | None = None) -> Claim:
        self.clock.advance(1)
        cmd = replace(seed(agent=agent, ttl=3600), base_commit="")
        if objective is not None:
            cmd = replace(cmd, objective=objective)
        revision = self.service.claims.get_claim(pred.id).claim.revision
        return self.service.takeover.take_over(cmd, TakeoverRequest(pred.id, revision)).claim


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_a_successor_keeps_the_carve_outs_of_the_patterns_it_continues(world: World) -> None:
    a = world.open("web/**", "src/settlement/retry.py", agent="a")
    d = world.open("README.md", "src/settlement/**", agent="d")
    assert d.status is ClaimStatus.NEGOTIATING
    meeting = world.service.meetings.get_meeting(d.meeting_ids[0])
    split = {
        "type": "split_ownership",
        "assignments": [
            {"claimId": d.id, "targets": ["README.md"]},
            {"claimId": a.id, "targets": ["src/settlement/retry.py"]},
        ],
    }
    world.service.meetings.resolve(
        Resolve(meeting.id, meeting.revision, resolution_from_wire(split), "lead")
    )
    world.abandon(d)

    e = world.take_over(d, "e")

    assert e.status is ClaimStatus.ACTIVE  # no new negotiation with a over retry.py
    assert e.carve_outs == (("src/settlement/**", ("src/settlement/retry.py",)),)
    ledger = ["src/settlement/ledger.py"]
    assert world.service.claims.check_write(e.id, ledger) == ledger
    with pytest.raises(DetenteError):
        world.service.claims.check_write(e.id, ["src/settlement/retry.py"])
    replayed = world.restart().claims.get_claim(e.id).claim
    assert replayed.carve_outs == e.carve_outs


def test_a_successor_gets_the_semantic_record_of_its_objective_against_the_holders(
    world: World,
) -> None:
    require_model()
    holder = world.open("src/a.py", agent="a", objective="Make the HTTP client retry failures")
    pred = world.open("src/b.py", agent="p", objective="Add retries with backoff to the client")
    assert {o.claim_id for o in world.service.claims.get_claim(pred.id).semantic} == {holder.id}
    world.abandon(pred)

    succ = world.take_over(pred, "s", objective="Add retries with backoff to the client")

    assert succ.semantic is not None
    assert [claim_id for claim_id, _ in succ.semantic.similar] == [holder.id]
    view = world.service.claims.get_claim(succ.id)
    assert {o.claim_id for o in view.semantic} == {holder.id}
    assert {o.claim_id for o in world.service.claims.get_claim(holder.id).semantic} == {succ.id}
