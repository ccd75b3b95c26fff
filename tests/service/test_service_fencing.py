"""Fencing tokens at the integration ref: a stalled predecessor's late write is refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import TakeoverRequest
from detente.domain.claims.model import ClaimStatus
from detente.domain.policy import Policy
from detente.errors import StaleFencingToken
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from gates_support import commit, completion, git, make_repo, passed

from support import counting_ids, seed


def test_a_stalled_claim_taken_over_cannot_integrate_with_its_old_token(tmp_path: Path) -> None:
    repo, m0 = make_repo(tmp_path / "repo")
    clock = FakeClock()
    svc = Service(
        SqliteStore(tmp_path / "d.db"),
        clock,
        [RepoConfig("demo", repo)],
        policy=Policy(takeover_grace_seconds=0),
        ids=counting_ids(),
    )
    a = svc.claims.open_claim(replace(seed("a.py", agent="alice", ttl=10), base_commit=m0)).claim
    head_a = commit(repo, {"a.py": "a = 'alice'\n"}, parent=m0, when=5)
    clock.advance(11)  # A stalls: no heartbeat; its lease expires

    expired = svc.claims.get_claim(a.id).claim
    assert expired.status is ClaimStatus.EXPIRED
    b = svc.takeover.take_over(
        replace(seed("a.py", agent="bob"), base_commit=""),
        TakeoverRequest(a.id, expired.revision),
    ).claim
    assert b.fencing_token == a.fencing_token + 1
    head_b = commit(repo, {"a.py": "a = 'bob'\n"}, parent=m0, when=20)
    done = svc.gates.complete(b.id, completion(b, head_b, m0, ("a.py",), tests=(passed("t", 30),)))
    assert done.claim.status in (ClaimStatus.INTEGRATED, ClaimStatus.COMPLETED)
    assert git(repo, "rev-parse", "refs/heads/main") == head_b

    head_before, events_before = git(repo, "rev-parse", "refs/heads/main"), svc.head()
    stale = svc.claims.get_claim(a.id).claim
    with pytest.raises(StaleFencingToken) as info:
        svc.gates.complete(
            a.id, completion(stale, head_a, head_b, ("a.py",), token=a.fencing_token)
        )
    assert info.value.extra["expected"] == b.fencing_token
    assert info.value.extra["actual"] == a.fencing_token
    assert git(repo, "rev-parse", "refs/heads/main") == head_before
    assert svc.head() == events_before
    assert svc.claims.get_claim(a.id).claim.status is ClaimStatus.TAKEN_OVER
