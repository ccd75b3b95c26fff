"""Completion evidence and integration by CAS, through the service on SQLite and real git."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from detente.domain.claims.commands import OpenClaim
from detente.domain.claims.model import Claim, ClaimStatus, MemoryImpact
from detente.domain.gates.evidence import BaseRef, TestRecord
from detente.domain.meetings.commands import Accept, Propose
from detente.domain.meetings.resolution_types import resolution_from_wire
from detente.errors import (
    EvidenceRejected,
    StaleBase,
    StaleFencingToken,
    ValidationError,
)
from detente.service import Service
from gates_support import at, commit, completion, git, hermetic, make_repo, make_service, passed

from support import seed


@pytest.fixture(autouse=True)
def _hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic(tmp_path, monkeypatch)


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def service(repo: tuple[Path, str], tmp_path: Path) -> Service:
    return make_service(repo[0], tmp_path / "detente.db")


def _open(service: Service, base: str, *paths: str, agent: str = "alice", **kw: Any) -> Claim:
    cmd: OpenClaim = replace(seed(*paths, agent=agent, **kw), base_commit=base)
    return service.claims.open_claim(cmd).claim


def _main(repo: Path) -> str:
    return git(repo, "rev-parse", "refs/heads/main")


def test_a_valid_completion_advances_main_by_cas_and_completes_the_claim(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    claim = _open(service, m0, "a.py", test_responsibility=("pytest -q",))
    head = commit(path, {"a.py": "a = 2\n"}, parent=m0, when=10)
    view = service.gates.complete(
        claim.id, completion(claim, head, m0, ("a.py",), tests=(passed("pytest -q", 20),))
    )
    assert view.claim.status is ClaimStatus.COMPLETED
    assert view.claim.integration == {
        "outcome": "integrated",
        "ref": "refs/heads/main",
        "oldOid": m0,
        "newOid": head,
        "fencingToken": claim.fencing_token,
        "at": view.claim.integration["at"] if view.claim.integration else None,
    }
    assert view.claim.evidence and view.claim.evidence["headCommit"] == head
    assert _main(path) == head


def test_failing_test_nonzero_exit_old_result_and_wrong_base_oid_are_each_listed(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    claim = _open(service, m0, "a.py", test_responsibility=("unit", "lint", "types"))
    head = commit(path, {"a.py": "a = 2\n"}, parent=m0, when=100)
    elsewhere = commit(path, {"b.py": "b = 9\n"}, parent=m0, when=50)
    tests = (
        passed("unit", 200, status="failed", exit_code=1),
        passed("lint", 200, exit_code=2),
        passed("types", 99),  # recorded a second before the head commit
    )
    with pytest.raises(EvidenceRejected) as caught:
        service.gates.complete(claim.id, completion(claim, head, elsewhere, ("a.py",), tests=tests))
    failures = caught.value.failures
    assert any("wrong base OID" in f and elsewhere[:12] in f for f in failures)
    assert "test 'unit' has status 'failed', not 'passed'" in failures
    assert "test 'unit' exited with code 1" in failures
    assert "test 'lint' exited with code 2" in failures
    assert any(
        f.startswith("test 'types' was recorded at") and "before the head" in f for f in failures
    )
    assert service.claims.get_claim(claim.id).claim.status is ClaimStatus.ACTIVE
    assert _main(path) == m0


def test_a_missing_expected_base_oid_is_refused_and_never_defaulted_to_the_tip(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    claim = _open(service, m0, "a.py")
    head = commit(path, {"a.py": "a = 2\n"}, parent=m0, when=10)
    cmd = completion(claim, head, m0, ("a.py",))
    for base_ref in (None, BaseRef("refs/heads/main", "")):
        with pytest.raises(ValidationError) as caught:
            service.gates.complete(claim.id, replace(cmd, expected_base_ref=base_ref))
        assert caught.value.field == "expectedBaseRef.oid"
    assert _main(path) == m0


def test_changed_files_must_equal_the_real_diff_and_stay_inside_the_claim(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    bob = _open(service, m0, "b.py", agent="bob")
    claim = _open(service, m0, "a.py", "new.py")
    head = commit(
        path,
        {"a.py": "a = 2\n", "b.py": "b = 2\n", "docs/guide.md": None, "new.py": "n\n"},
        parent=m0,
        when=10,
    )
    with pytest.raises(EvidenceRejected) as caught:
        service.gates.complete(claim.id, completion(claim, head, m0, ("a.py", "c.py", "new.py")))
    assert caught.value.failures == [
        "changedFiles misses b.py (changed between the base and the head)",
        "changedFiles misses docs/guide.md (changed between the base and the head)",
        "changedFiles lists c.py, which the base..head diff does not change",
        f"b.py is held by claim {bob.id} (bob)",
        f"docs/guide.md is outside claim {claim.id}'s targets",
    ]


def test_an_older_fencing_token_is_stale_and_a_missing_one_is_the_claims_own(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    _open(service, m0, "docs/**", agent="first")
    claim = _open(service, m0, "a.py")
    assert claim.fencing_token == 2
    head = commit(path, {"a.py": "a = 2\n"}, parent=m0, when=10)
    cmd = completion(claim, head, m0, ("a.py",))
    with pytest.raises(StaleFencingToken) as stale:
        service.gates.complete(claim.id, replace(cmd, fencing_token=1))
    assert (stale.value.extra["expected"], stale.value.extra["actual"]) == (2, 1)
    assert _main(path) == m0
    # expectedClaimRevision already pins the holder: the server uses the claim's token.
    done = service.gates.complete(claim.id, replace(cmd, fencing_token=None))
    assert done.claim.status is ClaimStatus.COMPLETED


def test_b_green_against_m0_lands_only_after_rebasing_on_m1_and_recollecting_evidence(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    a = _open(service, m0, "a.py", agent="alice", test_responsibility=("unit",))
    b = _open(service, m0, "b.py", agent="bob", test_responsibility=("unit",))
    a_head = commit(path, {"a.py": "a = 2\n"}, parent=m0, when=10)
    b_head = commit(path, {"b.py": "b = 2\n"}, parent=m0, when=10)
    green = (passed("unit", 20),)
    m1 = service.gates.complete(a.id, completion(a, a_head, m0, ("a.py",), tests=green))
    assert m1.claim.status is ClaimStatus.COMPLETED and _main(path) == a_head

    with pytest.raises(StaleBase) as stale:
        service.gates.complete(b.id, completion(b, b_head, m0, ("b.py",), tests=green))
    assert stale.value.extra["actual"] == a_head
    b = service.claims.get_claim(b.id).claim
    assert b.status is ClaimStatus.ACTIVE
    assert b.evidence and b.evidence["stale"] is True

    # Naming M1 without rebasing: the head does not descend from it.
    with pytest.raises(EvidenceRejected) as not_rebased:
        service.gates.complete(b.id, completion(b, b_head, a_head, ("b.py",), tests=green))
    assert any("wrong base OID" in f for f in not_rebased.value.failures)
    # Rebased onto M1, but the old test results predate the rebased commit.
    rebased = commit(path, {"b.py": "b = 2\n"}, parent=a_head, when=30)
    with pytest.raises(EvidenceRejected) as old_tests:
        service.gates.complete(b.id, completion(b, rebased, a_head, ("b.py",), tests=green))
    assert any("before the head commit" in f for f in old_tests.value.failures)
    rerun = (passed("unit", 40),)
    view = service.gates.complete(b.id, completion(b, rebased, a_head, ("b.py",), tests=rerun))
    assert view.claim.status is ClaimStatus.COMPLETED
    assert _main(path) == rebased


def test_a_joint_group_member_must_present_every_members_required_tests(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    a = _open(service, m0, "a.py", agent="alice", test_responsibility=("unit",))
    b_view = service.claims.open_claim(
        replace(seed("a.py", agent="bob", test_responsibility=("e2e",)), base_commit=m0)
    )
    meeting = b_view.meetings[0]
    joint = {"type": "joint", "claimIds": [a.id, b_view.claim.id]}
    proposed = service.meetings.propose(
        Propose(meeting.id, meeting.revision, a.id, resolution_from_wire(joint))
    )
    proposal = proposed.meeting.proposals[-1]
    service.meetings.accept(
        Accept(meeting.id, proposed.meeting.revision, b_view.claim.id, proposal.id)
    )
    a = service.claims.get_claim(a.id).claim
    head = commit(path, {"a.py": "a = 3\n"}, parent=m0, when=10)
    with pytest.raises(EvidenceRejected) as caught:
        service.gates.complete(
            a.id, completion(a, head, m0, ("a.py",), tests=(passed("unit", 20),))
        )
    assert caught.value.failures == [
        f"required test 'e2e' has no result (joint member {b_view.claim.id}'s responsibility)"
    ]
    tests = (passed("unit", 20), passed("e2e", 20))
    view = service.gates.complete(a.id, completion(a, head, m0, ("a.py",), tests=tests))
    assert view.claim.status is ClaimStatus.COMPLETED


def test_memory_impacts_keep_an_integrated_claim_open_until_the_updates_are_presented(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    cmd = replace(seed("a.py", memory_impacts=(MemoryImpact("docs/guide.md"),)), base_commit=m0)
    claim = service.claims.open_claim(cmd).claim
    head = commit(path, {"a.py": "a = 2\n"}, parent=m0, when=10)
    view = service.gates.complete(claim.id, completion(claim, head, m0, ("a.py",)))
    assert view.claim.status is ClaimStatus.INTEGRATED
    integrated = view.claim
    with pytest.raises(EvidenceRejected) as pending:
        service.gates.complete(claim.id, completion(integrated, head, m0, ("a.py",)))
    assert pending.value.failures == [
        "memory update of docs/guide.md not recorded (list it in evidence.memoryUpdates)"
    ]
    done = completion(integrated, head, m0, ("a.py",), memory_updates=("docs/guide.md",))
    assert service.gates.complete(claim.id, done).claim.status is ClaimStatus.COMPLETED


def test_a_retry_after_the_ref_moved_to_its_own_head_records_the_integration(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    claim = _open(service, m0, "a.py")
    head = commit(path, {"a.py": "a = 2\n"}, parent=m0, when=10)
    git(path, "update-ref", "refs/heads/main", head, m0)  # as if a crash lost the events
    view = service.gates.complete(claim.id, completion(claim, head, m0, ("a.py",)))
    assert view.claim.status is ClaimStatus.COMPLETED
    assert view.claim.integration and view.claim.integration["newOid"] == head


def test_test_results_recorded_at_the_head_commit_second_count_as_after_it(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    claim = _open(service, m0, "a.py", test_responsibility=("unit",))
    head = commit(path, {"a.py": "a = 2\n"}, parent=m0, when=10)
    same_second = (TestRecord("unit", "passed", 0, at(10.5)),)
    view = service.gates.complete(
        claim.id, completion(claim, head, m0, ("a.py",), tests=same_second)
    )
    assert view.claim.status is ClaimStatus.COMPLETED


def test_an_intermediate_commit_of_an_out_of_scope_file_is_refused_though_a_later_one_undoes_it(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    bob = _open(service, m0, "b.py", agent="bob")
    claim = _open(service, m0, "a.py")
    sneak = commit(path, {"a.py": "a = 2\n", "b.py": "b = 666\n", "x.py": "x\n"}, parent=m0)
    head = commit(path, {"b.py": "b = 1\n", "x.py": None}, parent=sneak, when=10)
    assert git(path, "diff", "--name-only", m0, head) == "a.py"  # the net diff is in scope

    with pytest.raises(EvidenceRejected) as caught:
        service.gates.complete(claim.id, completion(claim, head, m0, ("a.py",)))

    assert caught.value.failures == [
        f"b.py is held by claim {bob.id} (bob) (changed by commit {sneak[:12]}, "
        "though the base..head diff does not show it)",
        f"x.py is outside claim {claim.id}'s targets (changed by commit {sneak[:12]}, "
        "though the base..head diff does not show it)",
    ]
    assert _main(path) == m0
