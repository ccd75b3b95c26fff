"""The coordination protocol in the situations it exists for: three parties, scopes that
change, resolutions that cover part of a dispute (issue #12, failing inputs 1-4).

Every test runs on every store; after every command the protocol invariants are checked
(``tests/invariant_checks.py``), so a wedge anywhere fails the test that caused it.
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeScope, SetStatus, TakeoverRequest
from detente.domain.claims.model import Claim, ClaimStatus, MemoryImpact
from detente.domain.meetings.commands import Resolve
from detente.domain.meetings.model import Dissolved, MeetingStatus
from detente.domain.meetings.resolution_types import resolution_from_wire
from detente.domain.memory import commands as mc
from detente.errors import (
    InvalidTransition,
    LeaseExpired,
    OverlapBlocking,
    StaleFencingToken,
    ValidationError,
)
from detente.service import RepoConfig, Service
from detente.storage.base import Store

from support import counting_ids, seed


def _open(service: Service, agent: str, *paths: str, ttl: int = 3600) -> str:
    return service.claims.open_claim(seed(*paths, agent=agent, ttl=ttl)).claim.id


def _status(service: Service, claim_id: str) -> ClaimStatus:
    return service.claims.get_claim(claim_id).claim.status


def _resolve(service: Service, meeting_id: str, resolution: dict[str, object]) -> None:
    rev = service.meetings.get_meeting(meeting_id).revision
    service.meetings.resolve(Resolve(meeting_id, rev, resolution_from_wire(resolution), "lead"))


# ---------------------------------------------------------------------------- 1. split


def test_a_split_partitions_only_the_contested_targets_and_keeps_everyones_other_scope(
    service: Service,
) -> None:
    a = _open(service, "a", "src/api/**", "docs/a.md")
    d = service.claims.open_claim(seed("README.md", "docs/**", agent="d", ttl=3600)).claim
    assert d.status is ClaimStatus.NEGOTIATING
    meeting = service.meetings.get_meeting(d.meeting_ids[0])
    assert [t.target for t in meeting.contested_targets] == ["docs/a.md"]

    _resolve(
        service,
        meeting.id,
        {
            "type": "split_ownership",
            "assignments": [
                {"claimId": d.id, "targets": ["README.md"]},
                {"claimId": a, "targets": ["docs/a.md"]},
            ],
        },
    )

    claim_a = service.claims.get_claim(a).claim
    assert claim_a.paths == ("src/api/**", "docs/a.md")
    assert service.claims.check_write(a, ["src/api/app.py"]) == ["src/api/app.py"]
    assert service.claims.check_write(a, ["docs/a.md"]) == ["docs/a.md"]
    claim_d = service.claims.get_claim(d.id).claim
    assert claim_d.status is ClaimStatus.ACTIVE
    assert claim_d.paths == ("README.md", "docs/**")  # docs/** minus docs/a.md
    assert claim_d.carve_outs == (("docs/**", ("docs/a.md",)),)
    assert service.claims.check_write(d.id, ["docs/b.md", "README.md"]) == [
        "docs/b.md",
        "README.md",
    ]
    with pytest.raises(OverlapBlocking):
        service.claims.check_write(d.id, ["docs/a.md"])


def test_a_split_that_would_leave_two_claims_overlapping_is_refused_and_changes_nothing(
    service: Service,
) -> None:
    a = _open(service, "a", "src/**", "lib/x.py")
    b = service.claims.open_claim(seed("src/x.py", "lib/**", agent="b", ttl=3600)).claim
    meeting = service.meetings.get_meeting(b.meeting_ids[0])
    split = {
        "type": "split_ownership",
        "assignments": [
            {"claimId": b.id, "targets": ["src/x.py"]},
            {"claimId": a, "targets": ["src/y.py"]},
        ],
    }
    with pytest.raises(ValidationError, match="both covering"):
        service.meetings.resolve(
            Resolve(meeting.id, meeting.revision, resolution_from_wire(split), "lead")
        )
    assert service.meetings.get_meeting(meeting.id).revision == meeting.revision
    assert _status(service, b.id) is ClaimStatus.NEGOTIATING


# ---------------------------------------------------------------------------- 2. three parties


def test_a_resolution_that_settles_part_of_a_three_party_contest_is_refused_naming_the_rest(
    service: Service,
) -> None:
    e = _open(service, "e", "src/api/app.py")
    f = service.claims.open_claim(seed("src/api/*.py", agent="f", ttl=3600)).claim
    _resolve(service, f.meeting_ids[0], {"type": "joint", "claimIds": [e, f.id]})
    assert _status(service, f.id) is ClaimStatus.ACTIVE
    g = service.claims.open_claim(seed("src/api/app.py", agent="g", ttl=3600)).claim
    room = g.meeting_ids[0]
    before = service.meetings.get_meeting(room).revision

    with pytest.raises(ValidationError) as refused:
        _resolve(service, room, {"type": "serialize", "first": g.id, "then": e})

    assert refused.value.extra["unsettled"] == [f.id]
    assert f.id in refused.value.detail
    assert service.meetings.get_meeting(room).revision == before
    assert _status(service, e) is ClaimStatus.ACTIVE
    _resolve(service, room, {"type": "joint", "claimIds": [e, f.id, g.id]})
    assert _status(service, g.id) is ClaimStatus.ACTIVE
    assert service.claims.check_write(g.id, ["src/api/app.py"]) == ["src/api/app.py"]


def test_an_escalated_three_party_meeting_is_resolved_only_by_a_resolution_naming_all_three(
    service: Service,
) -> None:
    e = _open(service, "e", "src/api/app.py")
    f = service.claims.open_claim(seed("src/api/*.py", agent="f", ttl=3600)).claim
    _resolve(service, f.meeting_ids[0], {"type": "joint", "claimIds": [e, f.id]})
    g = service.claims.open_claim(seed("src/api/app.py", agent="g", ttl=3600)).claim
    room = g.meeting_ids[0]
    _resolve(service, room, {"type": "human_arbitration"})
    assert _status(service, g.id) is ClaimStatus.BLOCKED

    with pytest.raises(ValidationError):
        _resolve(service, room, {"type": "serialize", "first": g.id, "then": e})
    assert _status(service, g.id) is ClaimStatus.BLOCKED
    _resolve(service, room, {"type": "joint", "claimIds": [f.id, g.id, e]})
    assert {_status(service, c) for c in (e, f.id, g.id)} == {ClaimStatus.ACTIVE}


# ---------------------------------------------------------------------------- 3. release


def _contest(service: Service) -> tuple[str, str, str]:
    a = _open(service, "a", "src/api/**", ttl=60)
    b = service.claims.open_claim(seed("src/api/app.py", agent="b", ttl=3600)).claim
    assert b.status is ClaimStatus.NEGOTIATING
    return a, b.id, b.meeting_ids[0]


def _assert_released(service: Service, b: str, meeting_id: str) -> None:
    view = service.claims.get_claim(b)
    assert view.claim.status is ClaimStatus.ACTIVE
    assert view.overlaps == []
    meeting = service.meetings.get_meeting(meeting_id)
    assert meeting.status is MeetingStatus.RESOLVED
    assert isinstance(meeting.resolution, Dissolved)
    events, _ = service.events(repo="demo", limit=1000)
    assert [e.type for e in events if e.subject == f"meeting/{meeting_id}"][-1] == (
        "meeting.dissolved"
    )


def test_narrowing_the_holders_scope_activates_the_newcomer_and_dissolves_the_room(
    service: Service,
) -> None:
    a, b, room = _contest(service)
    rev = service.claims.get_claim(a).claim.revision
    service.claims.change_scope(
        ChangeScope(a, rev, add_paths=("lib/**",), remove_paths=("src/api/**",))
    )
    _assert_released(service, b, room)
    assert service.claims.check_write(b, ["src/api/app.py"]) == ["src/api/app.py"]


def test_abandoning_the_holder_activates_the_newcomer_and_dissolves_the_room(
    service: Service,
) -> None:
    a, b, room = _contest(service)
    rev = service.claims.get_claim(a).claim.revision
    service.claims.set_status(SetStatus(a, rev, ClaimStatus.ABANDONED, reason="done elsewhere"))
    _assert_released(service, b, room)


def test_a_holder_taken_over_with_its_contested_target_discarded_releases_the_newcomer(
    service: Service, clock: FakeClock
) -> None:
    a, b, room = _contest(service)
    clock.advance(61 + service.policy.takeover_grace_seconds)
    rev = service.claims.get_claim(a).claim.revision
    successor = service.takeover.take_over(
        replace(seed("lib/**", agent="c"), base_commit=""),
        TakeoverRequest(a, rev, (("src/api/**", "discard"),)),
    ).claim
    assert successor.status is ClaimStatus.ACTIVE
    _assert_released(service, b, room)


def test_a_holder_taken_over_with_its_target_continued_keeps_the_newcomer_in_a_live_room(
    service: Service, clock: FakeClock
) -> None:
    a, b, _room = _contest(service)
    clock.advance(61 + service.policy.takeover_grace_seconds)
    rev = service.claims.get_claim(a).claim.revision
    successor = service.takeover.take_over(
        replace(seed("src/api/**", agent="c"), base_commit=""), TakeoverRequest(a, rev)
    ).claim
    view = service.claims.get_claim(b)
    assert view.claim.status is ClaimStatus.NEGOTIATING
    assert [o.claim_id for o in view.overlaps] == [successor.id]
    rooms = [x for x in view.meetings if x.status is MeetingStatus.OPEN]
    assert any(successor.id in x.participants for x in rooms)


# ---------------------------------------------------------------------------- 4. authority


def test_a_negotiating_newcomer_never_blocks_the_holder_at_any_gate(service: Service) -> None:
    a = _open(service, "a", "src/**")
    b = service.claims.open_claim(seed("src/x.py", agent="b", ttl=3600)).claim
    assert b.status is ClaimStatus.NEGOTIATING

    assert service.claims.check_write(a, ["src/x.py"]) == ["src/x.py"]
    commit = service.gates.check_commit("demo", a, ["src/x.py"])
    assert commit.ok, commit.to_wire()["reasons"]
    nobody = service.gates.check_commit("demo", None, ["src/x.py"])
    assert [f.claim_id for f in nobody.findings] == [a]
    with pytest.raises(OverlapBlocking, match="negotiating"):
        service.claims.check_write(b.id, ["src/x.py"])


def test_an_expired_holder_still_blocks_others_but_cannot_write(
    service: Service, clock: FakeClock
) -> None:
    a = _open(service, "a", "src/**", ttl=60)
    c = _open(service, "c", "lib/**")
    clock.advance(61)
    assert _status(service, a) is ClaimStatus.EXPIRED
    commit = service.gates.check_commit("demo", c, ["src/x.py"])
    assert [f.claim_id for f in commit.findings] == [a]
    with pytest.raises(OverlapBlocking):
        service.claims.check_write(c, ["src/x.py"])
    with pytest.raises(LeaseExpired):
        service.claims.check_write(a, ["src/x.py"])


# ---------------------------------------------------------------------------- 4. memory

MEMORY_DOC = b"# AGENTS\n\nIntro.\n\n## Build\n\nRun make.\n\n## Style\n\nUse black.\n"


@pytest.fixture
def memory_service(store: Store, clock: FakeClock, tmp_path: Path) -> Service:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "AGENTS.md").write_bytes(MEMORY_DOC)
    svc = Service(store, clock, [RepoConfig("demo", root)], ids=counting_ids())
    svc.memory.register_document(mc.Register("demo", "AGENTS.md", "section_owned"))
    return svc


def _section_claim(svc: Service, agent: str) -> Claim:
    impact = MemoryImpact("AGENTS.md", sections=("build",))
    return svc.claims.open_claim(seed(agent=agent, ttl=3600, memory_impacts=(impact,))).claim


def _patch(svc: Service, claim: Claim, body: str) -> object:
    doc = svc.memory.list_documents("demo", "AGENTS.md")[0]
    return svc.memory.patch_section(
        mc.PatchSection(
            "demo",
            "AGENTS.md",
            "build",
            claim_id=claim.id,
            expected_section_revision=doc.section("build")["revision"],
            expected_file_hash=doc.document.file_hash,
            fencing_token=claim.fencing_token,
            body=body,
        )
    )


def test_five_negotiating_newcomers_never_block_the_active_owner_of_a_memory_section(
    memory_service: Service,
) -> None:
    first = _section_claim(memory_service, "agent0")
    others = [_section_claim(memory_service, f"agent{i}") for i in range(1, 6)]
    assert first.status is ClaimStatus.ACTIVE
    assert {c.status for c in others} == {ClaimStatus.NEGOTIATING}

    _patch(memory_service, first, "\nRun ninja.\n\n")

    doc = memory_service.memory.list_documents("demo", "AGENTS.md")[0]
    assert doc.section("build")["revision"] == 2
    with pytest.raises(OverlapBlocking, match="negotiating"):
        _patch(memory_service, others[0], "\nRun bazel.\n\n")


def test_a_taken_over_claims_late_memory_write_is_a_stale_fencing_token(
    memory_service: Service, clock: FakeClock
) -> None:
    impact = MemoryImpact("AGENTS.md", sections=("build",))
    old = memory_service.claims.open_claim(
        seed(agent="old", ttl=60, memory_impacts=(impact,))
    ).claim
    clock.advance(61 + memory_service.policy.takeover_grace_seconds)
    successor = memory_service.takeover.take_over(
        replace(seed(agent="new", ttl=3600, memory_impacts=(impact,)), base_commit=""),
        TakeoverRequest(old.id, memory_service.claims.get_claim(old.id).claim.revision),
    ).claim
    if successor.status is ClaimStatus.BLOCKED:  # a memory takeover waits for a human
        successor = memory_service.takeover.approve_takeover(
            successor.id, successor.revision, "lead", "human"
        ).claim
    assert memory_service.claims.get_claim(old.id).claim.status is ClaimStatus.TAKEN_OVER

    with pytest.raises(StaleFencingToken) as caught:
        _patch(memory_service, old, "\nlate\n\n")
    assert caught.value.extra["expected"] == successor.fencing_token
    assert caught.value.extra["actual"] == old.fencing_token
    with pytest.raises(StaleFencingToken):
        memory_service.claims.check_write(old.id, ["AGENTS.md"], old.fencing_token)


# ---------------------------------------------------------------------------- 7. abandon, draft


def test_abandoning_records_each_memory_document_the_claim_touched_at_its_revision(
    memory_service: Service,
) -> None:
    claim = _section_claim(memory_service, "writer")
    _patch(memory_service, claim, "\nRun ninja.\n\n")
    doc = memory_service.memory.list_documents("demo", "AGENTS.md")[0].document
    rev = memory_service.claims.get_claim(claim.id).claim.revision

    view = memory_service.claims.set_status(SetStatus(claim.id, rev, ClaimStatus.ABANDONED))

    assert view.claim.abandonment is not None
    assert view.claim.abandonment.memory_state == {
        "AGENTS.md": {"revision": doc.revision, "fileHash": doc.file_hash, "sections": ["build"]}
    }


def test_a_draft_holds_nothing_until_it_is_announced(service: Service) -> None:
    draft = service.claims.open_claim(
        replace(seed("src/x.py", agent="d", ttl=60), draft=True)
    ).claim
    assert draft.status is ClaimStatus.DRAFT
    holder = service.claims.open_claim(seed("src/**", agent="h", ttl=3600)).claim
    assert holder.status is ClaimStatus.ACTIVE  # a draft is not indexed for overlap
    assert service.gates.check_commit("demo", holder.id, ["src/x.py"]).ok

    announced = service.claims.announce_draft(draft.id, draft.revision)

    assert announced.claim.status is ClaimStatus.NEGOTIATING
    assert [o.claim_id for o in announced.overlaps] == [holder.id]
    assert announced.claim.lease.revision == 2


def test_a_draft_never_expires_and_announcing_twice_is_an_invalid_transition(
    service: Service, clock: FakeClock
) -> None:
    draft = service.claims.open_claim(replace(seed("a.py", agent="d", ttl=60), draft=True)).claim
    clock.advance(3600)
    assert _status(service, draft.id) is ClaimStatus.DRAFT
    view = service.claims.announce_draft(draft.id, draft.revision, 120)
    assert view.claim.status is ClaimStatus.ACTIVE
    with pytest.raises(InvalidTransition):
        service.claims.announce_draft(draft.id, view.claim.revision)


def test_appenders_to_an_append_only_document_never_lock_each_other_out(
    memory_service: Service, clock: FakeClock
) -> None:
    memory_service.memory.register_document(mc.Register("demo", "NOTES.md", "append_only"))
    impact = (MemoryImpact("NOTES.md", mode="append"),)
    first = memory_service.claims.open_claim(seed(agent="one", ttl=60, memory_impacts=impact)).claim
    second = memory_service.claims.open_claim(
        seed(agent="two", ttl=3600, memory_impacts=impact)
    ).claim
    assert (first.status, second.status) == (ClaimStatus.ACTIVE, ClaimStatus.ACTIVE)
    clock.advance(61)  # an expired appender blocks nobody either
    memory_service.memory.append_entry(
        mc.Append("demo", "NOTES.md", claim_id=second.id, fencing_token=second.fencing_token,
                  entry="- second's note\n")
    )  # fmt: skip
    third = memory_service.claims.open_claim(
        seed(agent="three", ttl=60, memory_impacts=impact)
    ).claim
    assert third.status is ClaimStatus.ACTIVE
