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
from detente.domain.meetings.resolution_types import resolution_from_wire
from detente.errors import OverlapBlocking, ValidationError
from detente.operations.bodies import ResolveIn
from detente.operations.body import parse
from detente.service import Service

from support import seed


def _open(service: Service, agent: str, *paths: str, **kw: Any) -> Claim:
    return service.claims.open_claim(seed(*paths, agent=agent, ttl=3600, **kw)).claim


def _claim(service: Service, claim: Claim) -> Claim:
    return service.claims.get_claim(claim.id).claim


def _resolve(service: Service, meeting_id: str, resolution: dict[str, Any]) -> None:
    meeting = service.meetings.get_meeting(meeting_id)
    service.meetings.resolve(
        Resolve(meeting.id, meeting.revision, resolution_from_wire(resolution), "lead")
    )


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


def test_a_carved_holder_may_be_assigned_its_own_glob_and_keeps_its_carve_outs(
    service: Service,
) -> None:
    a = _open(service, "a", "lib/executor/**")
    b = _open(service, "b", "lib/executor/task.py")
    _split(service, b.meeting_ids[0], (b, ["lib/executor/task.py"]), (a, []))
    g = _open(service, "g", "lib/gen/*.py", "lib/executor/stats.py")
    room = next(m for m in g.meeting_ids if a.id in service.meetings.get_meeting(m).participants)

    _split(service, room, (a, ["lib/executor/**"]), (g, ["lib/gen/*.py"]))

    holder = _claim(service, a)
    assert holder.carve_outs == (("lib/executor/**", ("lib/executor/task.py",)),)
    with pytest.raises(OverlapBlocking, match=b.id):
        service.claims.check_write(a.id, ["lib/executor/task.py"])


def test_two_bystanders_sharing_scope_do_not_sink_a_split_that_gives_them_nothing(
    service: Service,
) -> None:
    x = _open(service, "x", "docs/**")
    y = _open(service, "y", "docs/**/*.md")
    z = _open(service, "z", "docs/guide.md")
    rooms = {m for c in (y, z) for m in _claim(service, c).meeting_ids}
    room = next(
        m for m in rooms if {x.id, z.id} <= set(service.meetings.get_meeting(m).participants)
    )
    participants = service.meetings.get_meeting(room).participants
    assignments = [(z, ["docs/guide.md"])]
    assignments += [(_claim(service, x), [])]
    if y.id in participants:
        assignments.append((_claim(service, y), []))

    _split(service, room, *assignments)

    assert service.claims.check_write(z.id, ["docs/guide.md"]) == ["docs/guide.md"]


def test_a_module_that_loses_a_symbol_keeps_its_other_files_as_carved_paths(
    service: Service,
) -> None:
    z = _open(service, "z", "NEWS.md", modules=("ansible.config",))
    x = _open(service, "x", symbols=("lib/ansible/config/manager.py::Manager",))
    assert x.status is ClaimStatus.NEGOTIATING
    _split(service, x.meeting_ids[0], (x, ["lib/ansible/config/manager.py::Manager"]), (z, []))

    module_owner = _claim(service, z)
    assert module_owner.status is ClaimStatus.ACTIVE
    assert module_owner.modules == ()
    assert "*/ansible/config/**" in module_owner.paths
    assert module_owner.carved("*/ansible/config/**") == ("lib/ansible/config/manager.py",)
    init = ["lib/ansible/config/__init__.py"]
    assert service.claims.check_write(z.id, init) == init
    with pytest.raises(OverlapBlocking, match=x.id):
        service.claims.check_write(z.id, ["lib/ansible/config/manager.py"])


def test_a_claim_whose_whole_scope_a_split_gives_away_is_closed(service: Service) -> None:
    a = _open(service, "a", "docs/a.md")
    b = _open(service, "b", "docs/a.md")
    _split(service, b.meeting_ids[0], (b, ["docs/a.md"]), (a, []))
    assert _claim(service, a).status is ClaimStatus.ABANDONED
    assert _claim(service, b).status is ClaimStatus.ACTIVE


def test_a_claim_of_many_wildcard_heavy_globs_is_refused_before_anything_is_written(
    service: Service,
) -> None:
    head = service.head()
    heavy = [f"lib/*a*a*a*a*a*a*a*/**/*{i}*.py" for i in range(60)]
    with pytest.raises(ValidationError, match="wildcards in all") as refused:
        _open(service, "m", *heavy)
    assert refused.value.field == "paths"
    assert service.head() == head
    assert _open(service, "n", *[f"lib/p{i}/**" for i in range(300)]).status is ClaimStatus.ACTIVE


def test_a_claim_of_a_thousand_very_long_paths_is_refused_before_anything_is_written(
    service: Service,
) -> None:
    head = service.head()
    long = [f"docs/{'section/' * 100}page{i}.md" for i in range(1000)]  # 811 KB in all
    with pytest.raises(ValidationError, match="characters in all") as refused:
        _open(service, "m", *long, objective="document every section")
    assert refused.value.field == "paths"
    assert service.head() == head
    ordinary = [f"lib/ansible/modules/cloud/provider/module_{i:04d}.py" for i in range(1000)]
    assert _open(service, "n", *ordinary, objective="modules").status is ClaimStatus.ACTIVE


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"type": "serialize", "firts": "A", "then": "B"}, "resolution.firts"),
        ({"type": "serialize", "first": "A", "then": "B", "targets": ["x"]}, "resolution.targets"),
        ({"type": "handoff", "fromClaimId": "A", "toClaimId": "B", "note": 1}, "resolution.note"),
        ({"type": "joint", "claimIds": ["A", "B"], "accepted": True}, "resolution.accepted"),
        ({"type": "human_arbitration", "winner": "A"}, "resolution.winner"),
        (
            {"type": "split_ownership", "assignments": [{"claimId": "A", "target": ["x"]}]},
            "resolution.assignments[0].target",
        ),
    ],
)
def test_a_resolution_with_a_field_its_type_does_not_take_is_refused_and_changes_nothing(
    service: Service, extra: dict[str, Any], field: str
) -> None:
    a = _open(service, "a", "src/app.py")
    b = _open(service, "b", "src/app.py")
    names = {"A": a.id, "B": b.id}
    body = {k: (names.get(v, v) if isinstance(v, str) else v) for k, v in extra.items()}
    if "claimIds" in body:
        body["claimIds"] = [a.id, b.id]
    if "assignments" in body:
        body["assignments"] = [
            {"claimId": a.id, "target": ["src/app.py"]},
            {"claimId": b.id, "targets": []},
        ]
    meeting = service.meetings.get_meeting(_claim(service, b).meeting_ids[0])
    with pytest.raises(ValidationError) as refused:
        wire = {"expectedMeetingRevision": meeting.revision, "resolution": body}
        service.meetings.resolve(parse(ResolveIn, wire).to_command(meeting.id))
    assert refused.value.field == field
    assert "not permitted" in str(refused.value)
    assert service.meetings.get_meeting(meeting.id).revision == meeting.revision
    assert _claim(service, b).status is ClaimStatus.NEGOTIATING
