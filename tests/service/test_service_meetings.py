"""Meeting rooms: typed resolutions, acceptance, deadlines and CODEOWNERS arbitration."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeScope, SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.domain.meetings.commands import Accept, AcceptHandoff, Propose, Resolve
from detente.domain.meetings.model import MeetingStatus, meeting_to_wire
from detente.domain.meetings.resolution_types import resolution_from_wire
from detente.errors import (
    ForbiddenError,
    OutOfScope,
    OverlapBlocking,
    RevisionConflict,
    ValidationError,
)
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import counting_ids, seed


def _pair(
    service: Service, a_paths: tuple[str, ...], b_paths: tuple[str, ...]
) -> tuple[str, str, str]:
    a = service.claims.open_claim(seed(*a_paths, agent="alice", ttl=3600)).claim
    b = service.claims.open_claim(seed(*b_paths, agent="bob", ttl=3600))
    assert b.claim.status is ClaimStatus.NEGOTIATING
    return a.id, b.claim.id, b.claim.meeting_ids[0]


def test_a_split_gives_each_claim_its_assignment_and_refuses_writes_outside_it(
    service: Service,
) -> None:
    a, b, mtg = _pair(service, ("src/settlement/**",), ("src/settlement/retry.py", "docs/api/**"))
    meeting = service.meetings.get_meeting(mtg)
    split = {
        "type": "split_ownership",
        "assignments": [
            {"claimId": a, "targets": ["src/settlement/**"]},
            {"claimId": b, "targets": ["docs/api/**"]},
        ],
    }
    view = service.meetings.propose(Propose(mtg, meeting.revision, b, resolution_from_wire(split)))
    assert view.meeting.status is MeetingStatus.OPEN
    proposal = view.meeting.proposals[0]
    view = service.meetings.accept(Accept(mtg, view.meeting.revision, a, proposal.id))
    assert view.meeting.status is MeetingStatus.RESOLVED
    claim_b = service.claims.get_claim(b).claim
    assert claim_b.status is ClaimStatus.ACTIVE
    assert claim_b.paths == ("docs/api/**",)
    assert service.claims.check_write(b, ["docs/api/v1.md"]) == ["docs/api/v1.md"]
    with pytest.raises(OverlapBlocking) as info:
        service.claims.check_write(b, ["src/settlement/retry.py"])
    assert info.value.extra["blockers"][0]["claimId"] == a
    with pytest.raises(OverlapBlocking):
        service.claims.change_scope(
            ChangeScope(b, claim_b.revision, add_paths=("src/settlement/new.py",))
        )
    with pytest.raises(OutOfScope):
        service.claims.check_write(b, ["README.md"])


def test_a_split_that_still_overlaps_or_grants_new_territory_is_refused(service: Service) -> None:
    a, b, mtg = _pair(service, ("src/**",), ("src/x.py",))
    rev = service.meetings.get_meeting(mtg).revision
    overlapping = {
        "type": "split_ownership",
        "assignments": [
            {"claimId": a, "targets": ["src/**"]},
            {"claimId": b, "targets": ["src/x.py"]},
        ],
    }
    with pytest.raises(ValidationError, match="still overlap"):
        service.meetings.propose(Propose(mtg, rev, a, resolution_from_wire(overlapping)))
    grabbing = {"type": "split_ownership", "assignments": [{"claimId": b, "targets": ["lib/**"]}]}
    with pytest.raises(ValidationError, match="never grants new territory"):
        service.meetings.propose(Propose(mtg, rev, b, resolution_from_wire(grabbing)))
    assert service.meetings.get_meeting(mtg).revision == rev


def test_serialize_suspends_then_and_resumes_it_when_first_is_abandoned(service: Service) -> None:
    a, b, mtg = _pair(service, ("lib/**",), ("lib/core.py",))
    rev = service.meetings.get_meeting(mtg).revision
    view = service.meetings.resolve(
        Resolve(
            mtg, rev, resolution_from_wire({"type": "serialize", "first": a, "then": b}), "lead"
        )
    )
    assert {c.id: c.status for c in view.claims} == {
        a: ClaimStatus.ACTIVE,
        b: ClaimStatus.SUSPENDED,
    }
    assert service.claims.check_write(a, ["lib/core.py"]) == ["lib/core.py"]
    first = service.claims.get_claim(a).claim
    service.claims.set_status(SetStatus(a, first.revision, ClaimStatus.ABANDONED))
    resumed = service.claims.get_claim(b).claim
    assert resumed.status is ClaimStatus.ACTIVE
    assert "serialized turn" in (resumed.status_reason or "")
    events, _ = service.events(limit=1000)
    assert any(e.type == "claim.resumed" and e.data.get("releasedBy") == a for e in events)
    assert service.meetings.get_meeting(mtg).notices


def test_serialize_leaves_then_suspended_with_a_notice_when_first_expires(
    service: Service, clock: FakeClock
) -> None:
    a = service.claims.open_claim(seed("lib/**", agent="alice", ttl=10)).claim.id
    b = service.claims.open_claim(seed("lib/core.py", agent="bob", ttl=1000)).claim
    mtg = b.meeting_ids[0]
    service.meetings.resolve(
        Resolve(
            mtg,
            service.meetings.get_meeting(mtg).revision,
            resolution_from_wire({"type": "serialize", "first": a, "then": b.id}),
            "lead",
        )
    )
    clock.advance(11)
    service.sweep()
    assert service.claims.get_claim(a).claim.status is ClaimStatus.EXPIRED
    assert service.claims.get_claim(b.id).claim.status is ClaimStatus.SUSPENDED
    notices = service.meetings.get_meeting(mtg).notices
    assert notices and "expired" in str(notices[-1]["reason"])


def test_a_handoff_not_yet_accepted_leaves_ownership_with_the_sender(service: Service) -> None:
    a, b, mtg = _pair(service, ("pkg/**",), ("pkg/mod.py",))
    rev = service.meetings.get_meeting(mtg).revision
    view = service.meetings.resolve(
        Resolve(
            mtg,
            rev,
            resolution_from_wire({"type": "handoff", "fromClaimId": a, "toClaimId": b}),
            "lead",
        )
    )
    assert meeting_to_wire(view.meeting)["resolution"]["accepted"] is False
    assert service.claims.check_write(a, ["pkg/mod.py"]) == ["pkg/mod.py"]
    with pytest.raises(OverlapBlocking):
        service.claims.check_write(b, ["pkg/mod.py"])
    with pytest.raises(ForbiddenError):
        service.meetings.accept_handoff(AcceptHandoff(mtg, view.meeting.revision, a))
    service.meetings.accept_handoff(AcceptHandoff(mtg, view.meeting.revision, b))
    assert service.claims.get_claim(b).claim.status is ClaimStatus.ACTIVE
    assert service.claims.check_write(b, ["pkg/mod.py"]) == ["pkg/mod.py"]
    sender = service.claims.get_claim(a).claim
    assert sender.paths == ("pkg/**",)
    assert sender.carve_outs == (("pkg/**", ("pkg/mod.py",)),)
    with pytest.raises(OverlapBlocking):
        service.claims.check_write(a, ["pkg/mod.py"])
    assert service.claims.check_write(a, ["pkg/other.py"]) == ["pkg/other.py"]


def test_a_joint_resolution_lets_both_claims_write_the_shared_targets(service: Service) -> None:
    a, b, mtg = _pair(service, ("api/**",), ("api/schema.json",))
    rev = service.meetings.get_meeting(mtg).revision
    service.meetings.resolve(
        Resolve(mtg, rev, resolution_from_wire({"type": "joint", "claimIds": [a, b]}), "lead")
    )
    assert service.claims.check_write(a, ["api/schema.json"]) and service.claims.check_write(
        b, ["api/schema.json"]
    )
    [overlap] = service.claims.get_claim(b).overlaps
    assert overlap.severity.value == "advisory" and "joint" in overlap.reason


def test_two_resolves_racing_with_the_same_revision_let_exactly_one_win(tmp_path: Path) -> None:
    clock = FakeClock()
    service = Service(
        SqliteStore(tmp_path / "d.db"), clock, [RepoConfig("demo")], ids=counting_ids()
    )
    a, b, mtg = _pair(service, ("x/**",), ("x/y.py",))
    rev = service.meetings.get_meeting(mtg).revision
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def resolve(resolution: dict[str, object]) -> None:
        barrier.wait(timeout=10)
        try:
            service.meetings.resolve(Resolve(mtg, rev, resolution_from_wire(resolution), "lead"))
            outcomes.append("ok")
        except RevisionConflict as exc:
            assert exc.extra["current"]["status"] == "resolved"
            outcomes.append("conflict")

    threads = [
        threading.Thread(target=resolve, args=({"type": "joint", "claimIds": [a, b]},)),
        threading.Thread(target=resolve, args=({"type": "serialize", "first": a, "then": b},)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(outcomes) == ["conflict", "ok"]


def test_a_meeting_past_its_deadline_escalates_to_codeowners_and_blocks_its_claims(
    tmp_path: Path, clock: FakeClock
) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "CODEOWNERS").write_text(
        "* @fallback\nsrc/billing/ @billing-team\n!src/x @bad\n"
    )
    service = Service(SqliteStore(tmp_path / "d.db"), clock, [RepoConfig("demo", path=tmp_path)])
    a, b, mtg = _pair(service, ("src/billing/**",), ("src/billing/pay.py",))
    clock.advance(service.policy.meeting_deadline_seconds + 1)
    meeting = service.meetings.get_meeting(mtg)
    assert meeting.status is MeetingStatus.ESCALATED
    assert meeting.arbitrators == ("@billing-team",)
    assert meeting.escalation is not None
    assert meeting.escalation["invalidCodeownersLines"] == [
        ".github/CODEOWNERS:3: '!src/x @bad': "
        "negation with '!' is not supported by GitHub CODEOWNERS"
    ]
    assert {service.claims.get_claim(c).claim.status for c in (a, b)} == {ClaimStatus.BLOCKED}
    with pytest.raises(ForbiddenError):
        service.meetings.resolve(
            Resolve(
                mtg,
                meeting.revision,
                resolution_from_wire({"type": "joint", "claimIds": [a, b]}),
                "@someone",
            )
        )
    view = service.meetings.resolve(
        Resolve(
            mtg,
            meeting.revision,
            resolution_from_wire({"type": "serialize", "first": a, "then": b}),
            "@billing-team",
        )
    )
    assert {c.id: c.status for c in view.claims} == {
        a: ClaimStatus.ACTIVE,
        b: ClaimStatus.SUSPENDED,
    }


def test_a_third_claim_on_the_same_target_joins_the_open_meeting(service: Service) -> None:
    a, b, mtg = _pair(service, ("core/**",), ("core/a.py",))
    c = service.claims.open_claim(seed("core/b.py", agent="carol")).claim
    assert c.meeting_ids == (mtg,)
    assert service.meetings.get_meeting(mtg).participants == (a, b, c.id)


def test_proposals_need_a_participant_and_the_current_revision(service: Service) -> None:
    a, b, mtg = _pair(service, ("q/**",), ("q/r.py",))
    outsider = service.claims.open_claim(seed("elsewhere.py", agent="eve")).claim.id
    rev = service.meetings.get_meeting(mtg).revision
    joint = {"type": "joint", "claimIds": [a, b]}
    with pytest.raises(ForbiddenError):
        service.meetings.propose(Propose(mtg, rev, outsider, resolution_from_wire(joint)))
    with pytest.raises(RevisionConflict):
        service.meetings.propose(Propose(mtg, rev + 1, a, resolution_from_wire(joint)))
    with pytest.raises(ValidationError):
        service.meetings.propose(Propose(mtg, rev, a, resolution_from_wire({"type": "coin_flip"})))
    assert service.meetings.get_meeting(mtg).proposals == ()


def test_the_audit_replays_meeting_history_exactly(service: Service) -> None:
    a, b, mtg = _pair(service, ("z/**",), ("z/1.py",))
    service.meetings.resolve(
        Resolve(
            mtg,
            service.meetings.get_meeting(mtg).revision,
            resolution_from_wire({"type": "serialize", "first": a, "then": b}),
            "lead",
        )
    )
    first = service.claims.get_claim(a).claim
    service.claims.set_status(SetStatus(a, first.revision, ClaimStatus.ABANDONED))
    report = service.audit()
    assert report.ok, report.mismatches


def test_a_newcomer_still_negotiating_never_blocks_the_holders_writes(service: Service) -> None:
    a, b, mtg = _pair(service, ("src/**",), ("src/a.py",))
    assert service.claims.check_write(a, ["src/a.py"]) == ["src/a.py"]
    with pytest.raises(OverlapBlocking):
        service.claims.check_write(b, ["src/a.py"])
    holder = service.claims.get_claim(a)
    assert [x.id for x in holder.meetings] == [mtg]
    assert holder.to_wire()["meeting"]["id"] == mtg
