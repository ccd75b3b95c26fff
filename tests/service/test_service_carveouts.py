"""A split keeps every claim's uncontested scope, by carving the others' targets out of
its globs (issue #12, input 1, the whole kind).

D on ``docs/**`` against A's literal ``docs/a.md``: after the split D keeps ``docs/**``
minus ``docs/a.md``. The authority rule (``claim check``), the pre-commit check, overlap
analysis of later claims, the invariants (checked after every command) and a replay of
the stored log must all agree on it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeScope
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.meetings.commands import Resolve
from detente.domain.meetings.resolution_types import resolution_from_wire
from detente.errors import OutOfScope, OverlapBlocking, ValidationError
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import counting_ids, seed


def _open(service: Service, agent: str, *paths: str) -> Claim:
    return service.claims.open_claim(seed(*paths, agent=agent, ttl=3600)).claim


def _split(service: Service, newcomer: Claim, *assignments: tuple[Claim, list[str]]) -> None:
    meeting = service.meetings.get_meeting(newcomer.meeting_ids[0])
    resolution = {
        "type": "split_ownership",
        "assignments": [{"claimId": c.id, "targets": t} for c, t in assignments],
    }
    service.meetings.resolve(
        Resolve(meeting.id, meeting.revision, resolution_from_wire(resolution), "lead")
    )


def _claim(service: Service, claim: Claim) -> Claim:
    return service.claims.get_claim(claim.id).claim


def _docs_split(service: Service) -> tuple[Claim, Claim]:
    a = _open(service, "a", "src/api/**", "docs/a.md")
    d = _open(service, "d", "README.md", "docs/**")
    assert d.status is ClaimStatus.NEGOTIATING
    _split(service, d, (d, ["README.md"]), (a, ["docs/a.md"]))
    return _claim(service, a), _claim(service, d)


def test_the_newcomer_keeps_its_glob_minus_the_holders_target_and_every_check_agrees(
    service: Service,
) -> None:
    a, d = _docs_split(service)

    assert d.status is ClaimStatus.ACTIVE
    assert d.paths == ("README.md", "docs/**")
    assert d.carve_outs == (("docs/**", ("docs/a.md",)),)
    assert service.claims.check_write(d.id, ["docs/b.md", "docs/x/y.md"]) == [
        "docs/b.md",
        "docs/x/y.md",
    ]
    with pytest.raises(OverlapBlocking, match=a.id):
        service.claims.check_write(d.id, ["docs/a.md"])
    commit = service.gates.check_commit("demo", d.id, ["docs/a.md", "docs/b.md"])
    assert [(f.path, f.kind, f.claim_id) for f in commit.findings] == [("docs/a.md", "held", a.id)]
    assert service.gates.check_commit("demo", a.id, ["docs/a.md"]).ok
    with pytest.raises(OverlapBlocking, match=d.id):
        service.claims.check_write(a.id, ["docs/b.md"])
    assert service.claims.get_claim(d.id).overlaps == []
    wire = service.claims.get_claim(d.id).to_wire()["claim"]
    assert wire["carveOuts"] == {"docs/**": ["docs/a.md"]}


def test_a_later_claim_overlaps_the_carved_glob_only_outside_the_carve_out(
    service: Service,
) -> None:
    a, d = _docs_split(service)

    on_a = _open(service, "e", "docs/a.md")
    assert [o.claim_id for o in service.claims.get_claim(on_a.id).overlaps] == [a.id]
    on_both = _open(service, "f", "docs/*.md")
    found = {o.claim_id: o for o in service.claims.get_claim(on_both.id).overlaps}
    assert {a.id, d.id} <= set(found)
    assert found[d.id].targets[0].witness != "docs/a.md"


def test_nested_globs_keep_the_outer_glob_minus_the_inner_one(service: Service) -> None:
    a = _open(service, "a", "src/api/**")
    d = _open(service, "d", "src/**")
    _split(service, d, (d, ["src/main.py"]), (a, ["src/api/**"]))

    d = _claim(service, d)
    assert d.status is ClaimStatus.ACTIVE
    assert dict(d.carve_outs) == {"src/**": ("src/api/**",)}
    assert service.claims.check_write(d.id, ["src/main.py", "src/lib/x.py"])
    with pytest.raises(OverlapBlocking):
        service.claims.check_write(d.id, ["src/api/v2/app.py"])
    inner = _open(service, "e", "src/api/v2/*.py")
    assert [o.claim_id for o in service.claims.get_claim(inner.id).overlaps] == [a.id]


def test_three_parties_carve_each_holders_target_out_of_the_newcomers_glob(
    service: Service,
) -> None:
    a = _open(service, "a", "docs/a.md")
    b = _open(service, "b", "docs/b.md")
    d = _open(service, "d", "README.md", "docs/**")
    meeting = service.meetings.get_meeting(d.meeting_ids[0])
    assert set(meeting.participants) == {a.id, b.id, d.id}

    _split(service, d, (d, ["README.md"]), (a, ["docs/a.md"]), (b, ["docs/b.md"]))

    d = _claim(service, d)
    assert d.status is ClaimStatus.ACTIVE
    assert dict(d.carve_outs) == {"docs/**": ("docs/a.md", "docs/b.md")}
    assert service.claims.check_write(d.id, ["docs/c.md"]) == ["docs/c.md"]
    for path, holder in (("docs/a.md", a), ("docs/b.md", b)):
        with pytest.raises(OverlapBlocking, match=holder.id):
            service.claims.check_write(d.id, [path])


def test_a_pattern_wholly_inside_the_others_assignment_is_given_up(service: Service) -> None:
    a = _open(service, "a", "docs/**")
    d = _open(service, "d", "README.md", "docs/*.md")
    _split(service, d, (d, ["README.md"]), (a, ["docs/**"]))

    d = _claim(service, d)
    assert d.paths == ("README.md",) and d.carve_outs == ()
    assert _claim(service, a).paths == ("docs/**",)


def test_after_the_holder_shrinks_the_carve_out_stays_until_the_claim_asks_again(
    service: Service,
) -> None:
    a, d = _docs_split(service)
    service.claims.change_scope(ChangeScope(a.id, a.revision, remove_paths=("docs/a.md",)))

    with pytest.raises(OutOfScope):
        service.claims.check_write(d.id, ["docs/a.md"])
    d = _claim(service, d)
    view = service.claims.change_scope(ChangeScope(d.id, d.revision, add_paths=("docs/a.md",)))
    assert view.claim.status is ClaimStatus.ACTIVE
    assert service.claims.check_write(d.id, ["docs/a.md"]) == ["docs/a.md"]

    d = _claim(service, d)
    d = service.claims.change_scope(ChangeScope(d.id, d.revision, remove_paths=("docs/**",))).claim
    assert d.paths == ("README.md", "docs/a.md") and d.carve_outs == ()


def test_a_replay_of_the_stored_log_rebuilds_the_carve_outs(tmp_path: Path) -> None:
    db = tmp_path / "detente.db"
    first = Service(SqliteStore(db), FakeClock(), [RepoConfig("demo")], ids=counting_ids())
    _, d = _docs_split(first)
    first.store.close()

    again = Service(SqliteStore(db), FakeClock(), [RepoConfig("demo")], ids=counting_ids())
    replayed = _claim(again, d)
    assert replayed.carve_outs == (("docs/**", ("docs/a.md",)),)
    assert again.claims.check_write(d.id, ["docs/b.md"]) == ["docs/b.md"]
    assert again.audit().ok


def test_listing_claims_by_path_leaves_out_a_claim_whose_glob_has_it_carved_out(
    service: Service,
) -> None:
    a, d = _docs_split(service)

    on_a = [c.id for c in service.claims.list_claims(repo="demo", path="docs/a.md")]
    on_b = [c.id for c in service.claims.list_claims(repo="demo", path="docs/b.md")]

    assert on_a == [a.id]
    assert on_b == [d.id]


def test_removing_one_file_inside_the_claims_own_glob_carves_it_out(service: Service) -> None:
    c = _open(service, "c", "docs/**")
    service.claims.change_scope(
        ChangeScope(c.id, c.revision, remove_paths=("docs/a.md",), reason="not mine")
    )

    c = _claim(service, c)
    assert c.paths == ("docs/**",)
    assert dict(c.carve_outs) == {"docs/**": ("docs/a.md",)}
    assert service.claims.check_write(c.id, ["docs/b.md"]) == ["docs/b.md"]
    with pytest.raises(OutOfScope):
        service.claims.check_write(c.id, ["docs/a.md"])
    other = _open(service, "e", "docs/a.md")
    assert other.status is ClaimStatus.ACTIVE


def test_removing_a_path_the_claim_does_not_cover_is_still_a_422(service: Service) -> None:
    c = _open(service, "c", "docs/**")
    with pytest.raises(ValidationError, match="removePaths"):
        service.claims.change_scope(ChangeScope(c.id, c.revision, remove_paths=("src/x.py",)))
