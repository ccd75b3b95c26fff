"""The seed's races replayed exactly: fake clock, fake ref store, in-memory event log.

No git process runs here: the repository is a :class:`~detente.vcs.fake_refs.FakeRefStore`
(refs with compare-and-swap, commits as whole trees), so each script builds the same
OIDs and interleaving on every run. After every command the protocol invariants are
checked (``tests/invariant_checks.py``). The same races on real git live in
``test_service_seed_races.py``, ``test_service_deploy.py`` and
``test_service_tree_severity.py``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from detente.clock import FakeClock
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.gates.deployments import Deploy
from detente.domain.gates.evidence import BaseRef, Evidence
from detente.domain.gates.integration import CompleteClaim
from detente.domain.meetings.commands import Resolve
from detente.domain.meetings.resolution_types import resolution_from_wire
from detente.domain.overlap.model import Severity
from detente.errors import BranchInUse, EvidenceRejected, StaleBase
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore
from detente.vcs.fake_refs import FakeRefStore

from support import counting_ids, seed

MAIN = "refs/heads/main"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


@pytest.fixture
def refs() -> FakeRefStore:
    refs = FakeRefStore()
    refs.commit(
        {
            ".gitattributes": "/gen/** linguist-generated\n",
            "gen/api.json": '{"v": 0}\n',
            "src/a.py": "a = 0\n",
            "src/b.py": "b = 0\n",
        },
        parent=None,
        when=at(0),
        message="initial",
        ref=MAIN,
    )
    return refs


@pytest.fixture
def service(refs: FakeRefStore) -> Service:
    return Service(MemoryStore(), FakeClock(), [RepoConfig("demo", refs=refs)], ids=counting_ids())


def _open(service: Service, refs: FakeRefStore, *paths: str, agent: str) -> Claim:
    m0 = refs.read_ref(MAIN)
    assert m0 is not None
    return service.claims.open_claim(
        replace(seed(*paths, agent=agent, ttl=600), base_commit=m0[:7])
    ).claim


def _complete(
    service: Service, claim: Claim, head: str, base: str, files: tuple[str, ...]
) -> Claim:
    claim = service.claims.get_claim(claim.id).claim
    cmd = CompleteClaim(
        claim.id,
        claim.revision,
        claim.fencing_token,
        BaseRef(MAIN, base),
        Evidence(head_commit=head, changed_files=files),
    )
    return service.gates.complete(claim.id, cmd).claim


def test_a_short_base_commit_resolves_to_the_full_oid_of_the_fake_repository(
    service: Service, refs: FakeRefStore
) -> None:
    claim = _open(service, refs, "src/a.py", agent="a")
    assert claim.base_commit == refs.read_ref(MAIN)


def test_two_integrations_racing_on_one_expected_oid_one_lands_and_the_other_rebases(
    service: Service, refs: FakeRefStore
) -> None:
    m0 = str(refs.read_ref(MAIN))
    a = _open(service, refs, "src/a.py", agent="a")
    b = _open(service, refs, "src/b.py", agent="b")
    head_a = refs.commit({"src/a.py": "a = 1\n"}, parent=m0, when=at(10))
    head_b = refs.commit({"src/b.py": "b = 1\n"}, parent=m0, when=at(10))

    assert _complete(service, a, head_a, m0, ("src/a.py",)).status is ClaimStatus.COMPLETED
    with pytest.raises(StaleBase) as lost:
        _complete(service, b, head_b, m0, ("src/b.py",))

    assert lost.value.extra["expected"] == m0 and lost.value.extra["actual"] == head_a
    assert service.claims.get_claim(b.id).claim.status is ClaimStatus.ACTIVE
    rebased = refs.commit({"src/b.py": "b = 1\n"}, parent=head_a, when=at(20))
    assert _complete(service, b, rebased, head_a, ("src/b.py",)).status is ClaimStatus.COMPLETED
    assert refs.reflog == [
        (MAIN, m0, head_a, f"detente: integrate {a.id}"),
        (MAIN, head_a, rebased, f"detente: integrate {b.id}"),
    ]
    assert service.audit().ok


def test_deploying_stale_code_is_refused_and_the_environment_keeps_the_fresh_build(
    service: Service, refs: FakeRefStore
) -> None:
    """Two deployers read the environment empty. One ships main with both changes; the
    other built before B landed and ships A's head for B's claim."""
    m0 = str(refs.read_ref(MAIN))
    a = _open(service, refs, "src/a.py", agent="a")
    b = _open(service, refs, "src/b.py", agent="b")
    head_a = refs.commit({"src/a.py": "a = 1\n"}, parent=m0, when=at(10))
    _complete(service, a, head_a, m0, ("src/a.py",))
    head_b = refs.commit({"src/b.py": "b = 1\n"}, parent=head_a, when=at(20))
    _complete(service, b, head_b, head_a, ("src/b.py",))

    fresh = service.deployments.deploy(Deploy("demo", "staging", b.id, head_b[:8], None))
    assert fresh.to_wire()["deployment"]["commitOid"] == head_b
    with pytest.raises(StaleBase) as raced:  # read the environment before the fresh deploy
        service.deployments.deploy(Deploy("demo", "staging", b.id, head_a, None))
    assert raced.value.extra["actual"] == head_b
    with pytest.raises(EvidenceRejected) as stale:  # re-read it, still ships the old build
        service.deployments.deploy(Deploy("demo", "staging", b.id, head_a, head_b))
    assert any(
        f"does not contain claim {b.id}'s integrated head" in f
        for f in stale.value.extra["failures"]
    )

    now = service.deployments.get_deployment("staging", "demo")
    assert now.to_wire()["deployment"]["commitOid"] == head_b
    assert [h["commitOid"] for h in now.to_wire()["history"]] == [head_b]


def test_generated_file_dirt_neither_extends_a_claim_nor_creates_an_overlap(
    service: Service, refs: FakeRefStore
) -> None:
    """Both changes rebuild ``gen/api.json`` (``linguist-generated``): each lands with it,
    neither claim grows, and a claim on the generated directory overlaps nobody."""
    m0 = str(refs.read_ref(MAIN))
    a = _open(service, refs, "src/a.py", agent="a")
    b = _open(service, refs, "src/b.py", agent="b")
    head_a = refs.commit(
        {"src/a.py": "a = 1\n", "gen/api.json": '{"v": 1}\n'}, parent=m0, when=at(10)
    )

    assert service.gates.check_commit("demo", a.id, ["src/a.py", "gen/api.json"]).ok
    done = _complete(service, a, head_a, m0, ("gen/api.json", "src/a.py"))
    assert done.status is ClaimStatus.COMPLETED
    assert done.paths == ("src/a.py",)

    gen = _open(service, refs, "gen/**", agent="g")
    assert gen.status is ClaimStatus.ACTIVE
    assert all(
        o.severity is not Severity.BLOCKING for o in service.claims.get_claim(gen.id).overlaps
    )
    head_b = refs.commit(
        {"src/b.py": "b = 1\n", "gen/api.json": '{"v": 2}\n'}, parent=head_a, when=at(20)
    )
    assert _complete(service, b, head_b, head_a, ("gen/api.json", "src/b.py")).paths == (
        "src/b.py",
    )
    assert refs.read_ref(MAIN) == head_b


def test_a_dirty_fake_checkout_of_main_refuses_the_integration_and_nothing_moves(
    service: Service, refs: FakeRefStore
) -> None:
    m0 = str(refs.read_ref(MAIN))
    checkout = refs.check_out(MAIN)
    checkout.edits["src/b.py"] = "b = 'mine'\n"
    a = _open(service, refs, "src/a.py", agent="a")
    head = refs.commit({"src/a.py": "a = 1\n"}, parent=m0, when=at(10))

    with pytest.raises(BranchInUse) as refused:
        _complete(service, a, head, m0, ("src/a.py",))
    assert refused.value.extra["dirtyPaths"] == ["src/b.py"]
    assert refs.read_ref(MAIN) == m0 and refs.reflog == []

    del checkout.edits["src/b.py"]
    _complete(service, a, head, m0, ("src/a.py",))
    assert refs.read_ref(MAIN) == head and checkout.head == head


def test_a_witness_on_a_real_tree_never_lies_in_a_carve_out(
    service: Service, refs: FakeRefStore
) -> None:
    m0 = str(refs.read_ref(MAIN))
    refs.commit({"docs/a.md": "a\n", "docs/b.md": "b\n"}, parent=m0, when=at(1), ref=MAIN)
    a = _open(service, refs, "docs/a.md", agent="a")
    d = _open(service, refs, "README.md", "docs/**", agent="d")
    meeting = service.meetings.get_meeting(d.meeting_ids[0])
    split = {
        "type": "split_ownership",
        "assignments": [
            {"claimId": d.id, "targets": ["README.md"]},
            {"claimId": a.id, "targets": ["docs/a.md"]},
        ],
    }
    service.meetings.resolve(
        Resolve(meeting.id, meeting.revision, resolution_from_wire(split), "lead")
    )

    f = _open(service, refs, "docs/*.md", agent="f")
    [on_d] = [o for o in service.claims.get_claim(f.id).overlaps if o.claim_id == d.id]
    assert on_d.severity is Severity.BLOCKING
    assert all(t.witness != "docs/a.md" for t in on_d.targets)
