"""Claims through the service, on the memory and SQLite stores (the ``store`` fixture)."""

from __future__ import annotations

from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeScope, RenewLease, SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.errors import (
    InvalidTransition,
    LeaseExpired,
    NotFoundError,
    RevisionConflict,
    ValidationError,
)
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import counting_ids, seed


def test_a_claim_without_overlap_is_active_with_a_lease_and_a_fencing_token(
    service: Service,
) -> None:
    view = service.claims.open_claim(seed("src/app.py"))
    assert view.claim.status is ClaimStatus.ACTIVE
    assert view.claim.fencing_token == 1
    assert view.claim.lease.revision == 1
    assert view.overlaps == []


@pytest.mark.parametrize(("first", "second"), [("src/**", "src/app.rs"), ("src/app.rs", "src/**")])
def test_a_recursive_glob_and_a_file_under_it_overlap_in_both_orders(
    service: Service, first: str, second: str
) -> None:
    a = service.claims.open_claim(seed(first, agent="alice"))
    b = service.claims.open_claim(seed(second, agent="bob"))
    assert a.claim.status is ClaimStatus.ACTIVE
    assert b.claim.status is ClaimStatus.NEGOTIATING
    [overlap] = b.overlaps
    assert overlap.claim_id == a.claim.id
    assert overlap.targets[0].witness == "src/app.rs"
    assert b.meetings and b.meetings[0].participants == (a.claim.id, b.claim.id)


def test_a_multi_target_claim_with_one_conflict_is_granted_nothing_and_lists_the_holder_once(
    service: Service,
) -> None:
    a = service.claims.open_claim(seed("p2/**", "docs/p2.md", agent="alice"))
    b = service.claims.open_claim(seed("p1/x.py", "p2/y.py", "docs/*.md", agent="bob"))
    assert b.claim.status is ClaimStatus.NEGOTIATING
    assert [o.claim_id for o in b.overlaps] == [a.claim.id]
    assert {t.witness for t in b.overlaps[0].targets} == {"p2/y.py", "docs/p2.md"}
    # Nothing granted: a third claim on p1/x.py still overlaps the negotiating claim.
    c = service.claims.open_claim(seed("p1/x.py", agent="carol"))
    assert c.claim.status is ClaimStatus.NEGOTIATING
    assert [o.claim_id for o in c.overlaps] == [b.claim.id]


def test_a_windows_separator_is_normalised_into_the_same_target(service: Service) -> None:
    a = service.claims.open_claim(seed("src/a.py", agent="alice"))
    b = service.claims.open_claim(seed("src\\a.py", agent="windows"))
    assert b.claim.paths == ("src/a.py",)
    assert [o.claim_id for o in b.overlaps] == [a.claim.id]


def test_a_markdown_glob_covers_dotfile_directories(service: Service) -> None:
    service.claims.open_claim(seed("**/*.md", agent="alice"))
    b = service.claims.open_claim(seed(".github/CONTRIBUTING.md", agent="bob"))
    assert b.claim.status is ClaimStatus.NEGOTIATING
    assert b.overlaps[0].targets[0].witness == ".github/CONTRIBUTING.md"


def test_disjoint_globs_do_not_overlap(service: Service) -> None:
    service.claims.open_claim(seed("src/*.py", agent="alice"))
    b = service.claims.open_claim(seed("src/*/x.py", agent="bob"))
    assert b.claim.status is ClaimStatus.ACTIVE


def test_case_insensitive_repositories_fold_case(clock: FakeClock) -> None:
    from detente.storage.memory import MemoryStore

    svc = Service(MemoryStore(), clock, [RepoConfig("demo", case_insensitive=True)])
    a = svc.claims.open_claim(seed("Src/App.py", agent="alice"))
    b = svc.claims.open_claim(seed("src/app.PY", agent="bob"))
    assert [o.claim_id for o in b.overlaps] == [a.claim.id]


def test_module_and_contract_areas_overlap_by_name(service: Service) -> None:
    a = service.claims.open_claim(
        seed("a.py", agent="alice", modules=("billing",), expected_contract_changes=("api/v1",))
    )
    b = service.claims.open_claim(seed("b.py", agent="bob", expected_contract_changes=("api/v1",)))
    assert b.claim.status is ClaimStatus.NEGOTIATING
    assert b.overlaps[0].kind.value == "contract"
    c = service.claims.open_claim(seed("c.py", agent="carol", modules=("billing",)))
    assert {o.claim_id for o in c.overlaps} == {a.claim.id}


@pytest.mark.parametrize("bad", ["../etc/passwd", "/abs/path", "!src/**", ""])
def test_a_bad_path_is_a_validation_error_and_changes_nothing(service: Service, bad: str) -> None:
    before = service.head()
    with pytest.raises(ValidationError) as info:
        service.claims.open_claim(seed("ok.py", bad))
    assert info.value.field is not None and info.value.field.startswith("paths")
    assert service.head() == before
    assert service.claims.list_claims() == []


def test_renewal_extends_only_the_lease_and_checks_both_revisions(
    service: Service, clock: FakeClock
) -> None:
    claim = service.claims.open_claim(seed("a.py", ttl=10)).claim
    clock.advance(5)
    renewed = service.claims.renew(RenewLease(claim.id, 1, claim.revision, 30)).claim
    assert renewed.lease.revision == 2
    assert renewed.lease.expires_at == clock.now().replace() + (
        renewed.lease.expires_at - clock.now()
    )
    assert (renewed.lease.expires_at - clock.now()).total_seconds() == 30
    assert renewed.paths == claim.paths and renewed.fencing_token == claim.fencing_token
    with pytest.raises(RevisionConflict) as info:
        service.claims.renew(RenewLease(claim.id, 1, renewed.revision, 30))
    assert info.value.expected == 1 and info.value.actual == 2
    assert info.value.extra["current"]["lease"]["revision"] == 2
    assert info.value.extra["eventIds"]


def test_a_stale_claim_revision_is_refused_with_the_current_record(service: Service) -> None:
    claim = service.claims.open_claim(seed("a.py")).claim
    with pytest.raises(RevisionConflict) as info:
        service.claims.set_status(SetStatus(claim.id, claim.revision - 1, ClaimStatus.SUSPENDED))
    assert info.value.extra["current"]["id"] == claim.id
    assert info.value.extra["current"]["revision"] == claim.revision
    assert service.claims.get_claim(claim.id).claim.status is ClaimStatus.ACTIVE


def test_a_heartbeat_arriving_as_the_lease_expires_gets_lease_expired_and_the_claim_stays_expired(
    service: Service, clock: FakeClock
) -> None:
    claim = service.claims.open_claim(seed("a.py", ttl=10)).claim
    clock.advance(10)
    with pytest.raises(LeaseExpired):
        service.claims.renew(RenewLease(claim.id, 1, claim.revision, 60))
    after = service.claims.get_claim(claim.id).claim
    assert after.status is ClaimStatus.EXPIRED
    assert after.lease.revision == 1
    with pytest.raises(LeaseExpired):
        service.claims.renew(RenewLease(claim.id, 1, after.revision, 60))


def test_an_expired_claim_keeps_holding_its_paths(service: Service, clock: FakeClock) -> None:
    a = service.claims.open_claim(seed("lib/**", ttl=5, agent="alice")).claim
    clock.advance(6)
    assert service.sweep() == 1
    b = service.claims.open_claim(seed("lib/x.py", agent="bob"))
    assert b.claim.status is ClaimStatus.NEGOTIATING
    assert "take it over" in b.overlaps[0].reason
    assert service.claims.get_claim(a.id).claim.status is ClaimStatus.EXPIRED


def test_an_abandoned_claim_releases_its_paths(service: Service) -> None:
    a = service.claims.open_claim(seed("lib/**", agent="alice")).claim
    service.claims.set_status(
        SetStatus(a.id, a.revision, ClaimStatus.ABANDONED, details={"headCommit": "b" * 40})
    )
    assert service.claims.get_claim(a.id).claim.abandonment is not None
    assert (
        service.claims.open_claim(seed("lib/x.py", agent="bob")).claim.status is ClaimStatus.ACTIVE
    )


def test_a_lease_keeps_its_original_deadline_across_a_restart(tmp_path: Path) -> None:
    clock = FakeClock()
    db = tmp_path / "detente.db"
    first = Service(SqliteStore(db), clock, [RepoConfig("demo")])
    claim = first.claims.open_claim(seed("a.py", ttl=10)).claim
    clock.advance(6)  # 4 s of 10 s left
    first.store.close()

    second = Service(SqliteStore(db), clock, [RepoConfig("demo")])
    reloaded = second.claims.get_claim(claim.id).claim
    assert reloaded.lease.expires_at == claim.lease.expires_at
    assert reloaded.status is ClaimStatus.ACTIVE
    clock.advance(4)
    assert second.claims.get_claim(claim.id).claim.status is ClaimStatus.EXPIRED


def test_fencing_tokens_increase_with_every_grant(service: Service) -> None:
    tokens = [service.claims.open_claim(seed(f"f{i}.py")).claim.fencing_token for i in range(5)]
    assert tokens == [1, 2, 3, 4, 5]


def test_scope_expansion_onto_a_held_path_moves_to_negotiating_and_keeps_granted_paths(
    service: Service,
) -> None:
    a = service.claims.open_claim(seed("shared/**", agent="alice")).claim
    b = service.claims.open_claim(seed("mine.py", agent="bob")).claim
    view = service.claims.change_scope(ChangeScope(b.id, b.revision, add_paths=("shared/x.py",)))
    assert view.claim.status is ClaimStatus.NEGOTIATING
    assert view.claim.paths == ("mine.py",)
    assert view.claim.pending_paths == ("shared/x.py",)
    assert [o.claim_id for o in view.overlaps] == [a.id]


def test_narrowing_scope_never_negotiates(service: Service) -> None:
    b = service.claims.open_claim(seed("a.py", "b.py")).claim
    view = service.claims.change_scope(ChangeScope(b.id, b.revision, remove_paths=("b.py",)))
    assert view.claim.status is ClaimStatus.ACTIVE and view.claim.paths == ("a.py",)


def test_suspend_and_resume_follow_the_state_machine(service: Service) -> None:
    c = service.claims.open_claim(seed("a.py")).claim
    s = service.claims.set_status(SetStatus(c.id, c.revision, ClaimStatus.SUSPENDED)).claim
    assert s.status is ClaimStatus.SUSPENDED
    with pytest.raises(InvalidTransition) as info:
        service.claims.set_status(SetStatus(c.id, s.revision, ClaimStatus.SUSPENDED))
    assert info.value.extra["from"] == "suspended" and info.value.extra["to"] == "suspended"
    r = service.claims.set_status(SetStatus(c.id, s.revision, ClaimStatus.ACTIVE)).claim
    assert r.status is ClaimStatus.ACTIVE


def test_an_unknown_claim_is_not_found(service: Service) -> None:
    with pytest.raises(NotFoundError):
        service.claims.get_claim("clm_nope")


def test_audit_passes_after_a_busy_history_and_projections_equal_replay(
    service: Service, clock: FakeClock
) -> None:
    a = service.claims.open_claim(seed("src/**", ttl=5)).claim
    service.claims.open_claim(seed("src/a.py", agent="bob"))
    service.claims.renew(RenewLease(a.id, 1, a.revision, 5))
    clock.advance(10)
    service.sweep()
    report = service.audit()
    assert report.ok, report.mismatches
    assert report.events == service.head() >= 6  # the renewal moved a lease row


def test_commands_on_one_repo_are_serialized_so_only_one_racer_is_active(tmp_path: Path) -> None:
    import threading

    clock = FakeClock()
    services = [
        Service(SqliteStore(tmp_path / "race.db"), clock, [RepoConfig("demo")], ids=counting_ids())
        for _ in range(2)
    ]
    results: list[str] = []
    barrier = threading.Barrier(2)

    def racer(svc: Service, i: int) -> None:
        barrier.wait(timeout=10)
        results.append(
            svc.claims.open_claim(
                seed("hot.py", agent=f"agent{i}", claim_id=f"clm_r{i}")
            ).claim.status.value
        )

    threads = [threading.Thread(target=racer, args=(s, i)) for i, s in enumerate(services)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(results) == ["active", "negotiating"]


def test_advisory_claims_warn_instead_of_blocking_and_expiry_releases_them(
    service: Service, clock: FakeClock
) -> None:
    a = service.claims.open_claim(seed("docs/foo.md", ttl=5, advisory=True)).claim
    b = service.claims.open_claim(seed("docs/**", agent="bob"))
    assert b.claim.status is ClaimStatus.ACTIVE
    assert [(o.claim_id, o.severity.value) for o in b.overlaps] == [(a.id, "advisory")]
    clock.advance(5)
    service.sweep()
    assert service.claims.get_claim(a.id).claim.status is ClaimStatus.EXPIRED
    assert service.claims.get_claim(b.claim.id).overlaps == []
