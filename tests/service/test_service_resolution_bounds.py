"""A resolution moves only contested targets: a split never grants territory, a handoff
moves only what the recipient asked for, and symbols and modules can be split.

Found by a new-user trial: ``--split Y='**'`` gave Y the whole repository over a third,
uninvolved claim's granted paths (two granted holders of one path, ``audit verify``
failing); a handoff moved the sender's whole ``packaging/**`` for a one-file request; a
split could not name a contested symbol or module, or "resolved" and reopened the same room.
"""

from __future__ import annotations

from typing import Any

import pytest

from detente.domain.claims.commands import ChangeScope
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.meetings.commands import AcceptHandoff, Resolve
from detente.errors import OverlapBlocking, ValidationError
from detente.service import Service

from support import seed


def _open(service: Service, agent: str, *paths: str, **kw: Any) -> Claim:
    return service.claims.open_claim(seed(*paths, agent=agent, ttl=3600, **kw)).claim


def _claim(service: Service, claim: Claim) -> Claim:
    return service.claims.get_claim(claim.id).claim


def _resolve(service: Service, meeting_id: str, resolution: dict[str, Any]) -> None:
    meeting = service.meetings.get_meeting(meeting_id)
    service.meetings.resolve(Resolve(meeting.id, meeting.revision, resolution, "lead"))


def _accept(service: Service, meeting_id: str, recipient: Claim) -> None:
    meeting = service.meetings.get_meeting(meeting_id)
    service.meetings.accept_handoff(AcceptHandoff(meeting.id, meeting.revision, recipient.id))


def _split(service: Service, meeting_id: str, *assignments: tuple[Claim, list[str]]) -> None:
    _resolve(
        service,
        meeting_id,
        {
            "type": "split_ownership",
            "assignments": [{"claimId": c.id, "targets": t} for c, t in assignments],
        },
    )


@pytest.mark.parametrize("target", ["**", "**/**/**/**", "*", "b*/**"])
def test_a_split_target_wider_than_the_claims_own_scope_is_refused_and_changes_nothing(
    service: Service, target: str
) -> None:
    x = _open(service, "x", "test/units/**")
    y = _open(service, "y", "bin/**")
    z = _open(service, "z", "bin/ansible")
    assert z.status is ClaimStatus.NEGOTIATING
    head = service.head()

    with pytest.raises(ValidationError, match="never grants new territory"):
        _split(service, z.meeting_ids[0], (y, [target]))

    assert service.head() == head
    assert _claim(service, y).paths == ("bin/**",)
    with pytest.raises(OverlapBlocking, match=x.id):
        service.claims.check_write(y.id, ["test/units/test_x.py"])
    assert service.claims.check_write(x.id, ["test/units/test_x.py"]) == ["test/units/test_x.py"]


def test_a_split_target_inside_a_carve_out_the_claim_gave_up_is_refused(service: Service) -> None:
    a = _open(service, "a", "docs/a.md")
    d = _open(service, "d", "README.md", "docs/**")
    _split(service, d.meeting_ids[0], (a, ["docs/a.md"]), (d, ["README.md"]))
    assert _claim(service, d).carve_outs == (("docs/**", ("docs/a.md",)),)
    e = _open(service, "e", "docs/**")
    assert e.status is ClaimStatus.NEGOTIATING
    room = next(m for m in e.meeting_ids if d.id in service.meetings.get_meeting(m).participants)

    with pytest.raises(ValidationError, match="never grants new territory"):
        _split(service, room, (d, ["docs/a.md"]), (e, ["docs/b.md"]))


def test_a_split_inside_the_claims_own_glob_still_resolves(service: Service) -> None:
    y = _open(service, "y", "bin/**")
    z = _open(service, "z", "bin/ansible", "lib/z.py")
    _split(service, z.meeting_ids[0], (y, ["bin/ansible-*"]), (z, ["bin/ansible"]))
    assert _claim(service, z).status is ClaimStatus.ACTIVE
    assert _claim(service, y).carve_outs == (("bin/**", ("bin/ansible",)),)


def test_a_handoff_moves_only_what_the_recipient_asked_for(service: Service) -> None:
    h1 = _open(service, "h1", "packaging/**")
    h2 = _open(service, "h2", "packaging/cli-doc/build.py")
    room = h2.meeting_ids[0]
    _resolve(service, room, {"type": "handoff", "fromClaimId": h1.id, "toClaimId": h2.id})
    _accept(service, room, h2)

    sender, recipient = _claim(service, h1), _claim(service, h2)
    assert recipient.paths == ("packaging/cli-doc/build.py",)
    assert sender.status is ClaimStatus.ACTIVE
    assert sender.paths == ("packaging/**",)
    assert sender.carve_outs == (("packaging/**", ("packaging/cli-doc/build.py",)),)
    assert service.claims.check_write(h1.id, ["packaging/cli-doc/man.j2"]) == [
        "packaging/cli-doc/man.j2"
    ]
    with pytest.raises(OverlapBlocking, match=h2.id):
        service.claims.check_write(h1.id, ["packaging/cli-doc/build.py"])


def test_a_sender_that_hands_off_its_whole_scope_is_closed(service: Service) -> None:
    h1 = _open(service, "h1", "packaging/cli-doc/build.py")
    h2 = _open(service, "h2", "packaging/**")
    room = h2.meeting_ids[0]
    _resolve(service, room, {"type": "handoff", "fromClaimId": h1.id, "toClaimId": h2.id})
    _accept(service, room, h2)

    assert _claim(service, h1).status is ClaimStatus.ABANDONED
    assert _claim(service, h2).paths == ("packaging/**",)
    assert service.claims.check_write(h2.id, ["packaging/cli-doc/build.py"])


def test_a_split_may_assign_a_contested_symbol_and_carves_its_file_from_the_glob(
    service: Service,
) -> None:
    a = _open(service, "a", "lib/executor/**")
    b = _open(service, "b", symbols=("lib/executor/task.py::Thing.run",))
    assert b.status is ClaimStatus.NEGOTIATING
    _split(
        service,
        b.meeting_ids[0],
        (a, ["lib/executor/other.py"]),
        (b, ["lib/executor/task.py::Thing.run"]),
    )

    a_now, b_now = _claim(service, a), _claim(service, b)
    assert b_now.status is ClaimStatus.ACTIVE and a_now.status is ClaimStatus.ACTIVE
    assert b_now.symbols == ("lib/executor/task.py::Thing.run",)
    assert a_now.carve_outs == (("lib/executor/**", ("lib/executor/task.py",)),)
    assert service.meetings.get_meeting(b.meeting_ids[0]).status.value == "resolved"
    assert [m for m in _claim(service, b).meeting_ids if m != b.meeting_ids[0]] == []


def test_a_split_may_assign_a_contested_module_by_name(service: Service) -> None:
    a = _open(service, "a", "README.md", modules=("ansible.executor",))
    b = _open(service, "b", "NEWS.md", modules=("ansible.executor.task",))
    assert b.status is ClaimStatus.NEGOTIATING
    _split(service, b.meeting_ids[0], (b, ["ansible.executor.task"]), (a, ["README.md"]))

    assert _claim(service, a).modules == ()
    assert _claim(service, b).modules == ("ansible.executor.task",)
    assert _claim(service, b).status is ClaimStatus.ACTIVE


def test_a_split_giving_the_glob_drops_the_symbol_from_the_other_claim(
    service: Service,
) -> None:
    a = _open(service, "a", "lib/executor/**")
    b = _open(service, "b", "NEWS.md", symbols=("lib/executor/task.py::Thing.run",))
    _split(service, b.meeting_ids[0], (a, ["lib/executor/**"]), (b, ["NEWS.md"]))

    assert _claim(service, b).symbols == ()
    assert _claim(service, b).status is ClaimStatus.ACTIVE
    assert _claim(service, a).carve_outs == ()


def test_a_split_that_leaves_a_symbol_with_both_claims_is_refused_not_reopened(
    service: Service,
) -> None:
    a = _open(service, "a", "lib/executor/**")
    b = _open(service, "b", "NEWS.md", symbols=("lib/executor/task.py::Thing.run",))
    head = service.head()
    with pytest.raises(ValidationError, match=r"Thing\.run"):
        _split(
            service,
            b.meeting_ids[0],
            (a, ["lib/executor/**"]),
            (b, ["lib/executor/task.py::Thing.run"]),
        )
    assert service.head() == head


def test_naming_the_holder_with_no_targets_carves_the_newcomers_file_out_of_its_glob(
    service: Service,
) -> None:
    e1 = _open(service, "e1", "hacking/azp/**")
    e2 = _open(service, "e2", "hacking/azp/README.md")
    _split(service, e2.meeting_ids[0], (e2, ["hacking/azp/README.md"]), (e1, []))

    assert _claim(service, e2).status is ClaimStatus.ACTIVE
    assert _claim(service, e1).carve_outs == (("hacking/azp/**", ("hacking/azp/README.md",)),)
    assert service.claims.check_write(e1.id, ["hacking/azp/run.sh"]) == ["hacking/azp/run.sh"]
    with pytest.raises(OverlapBlocking, match=e2.id):
        service.claims.check_write(e1.id, ["hacking/azp/README.md"])


def test_a_split_that_assigns_nothing_at_all_is_refused(service: Service) -> None:
    e1 = _open(service, "e1", "hacking/azp/**")
    e2 = _open(service, "e2", "hacking/azp/README.md")
    with pytest.raises(ValidationError, match="at least one target"):
        _split(service, e2.meeting_ids[0], (e2, []), (e1, []))


def test_a_granted_claim_widening_its_scope_keeps_writing_what_it_holds(service: Service) -> None:
    a = _open(service, "a", "docs/**")
    b = _open(service, "b", "src/**")
    widened = service.claims.change_scope(
        ChangeScope(a.id, _claim(service, a).revision, add_paths=("src/x.py", "NEWS.md"))
    ).claim
    assert widened.status is ClaimStatus.NEGOTIATING and "src/x.py" in widened.pending_paths

    assert service.claims.check_write(a.id, ["docs/guide.md"]) == ["docs/guide.md"]
    with pytest.raises(OverlapBlocking):
        service.claims.check_write(a.id, ["src/x.py"])
    assert service.gates.check_commit("demo", a.id, ["docs/guide.md"]).ok
    assert service.claims.check_write(b.id, ["src/x.py"]) == ["src/x.py"]


def test_an_escalation_by_the_newcomer_does_not_freeze_the_holders_work(service: Service) -> None:
    e1 = _open(service, "e1", "hacking/azp/**")
    e2 = _open(service, "e2", "hacking/azp/README.md")
    _resolve(service, e2.meeting_ids[0], {"type": "human_arbitration"})
    assert _claim(service, e2).status is ClaimStatus.BLOCKED

    assert service.claims.check_write(e1.id, ["hacking/azp/run.sh"]) == ["hacking/azp/run.sh"]
    assert service.gates.check_commit("demo", e1.id, ["hacking/azp/run.sh"]).ok
    with pytest.raises(OverlapBlocking):
        service.claims.check_write(e2.id, ["hacking/azp/README.md"])
