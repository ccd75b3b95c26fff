"""Merge checks between live claims and declared-versus-touched drift (issue 33), on a
real git repository: each claim works in a worktree the service created, commits there,
and its branch is merge-checked with ``git merge-tree``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.checks.model import CLAIM_DRIFTED, CLAIM_MERGE_CHECKED
from detente.domain.claims.commands import OpenClaim
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.events import MEETING_DISSOLVED, MEETING_OPENED
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from detente.vcs.repo import resolve_commit

from support import seed

#: Two neighbouring functions with no blank line between them: an edit of ``a``'s last
#: line and one of ``b``'s first line are adjacent hunks ``git merge`` cannot combine.
CALC = "def a():\n    return 1\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.py").write_text(CALC)
    (root / "docs").mkdir()
    (root / "docs" / "x.md").write_text("x\n")
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture
def svc(repo: Path, tmp_path: Path, clock: FakeClock) -> Iterator[Service]:
    service = Service(
        SqliteStore(tmp_path / "d.db"),
        clock,
        [RepoConfig("demo", path=repo, main_worktree=repo)],
        resolve_commit=resolve_commit,
    )
    yield service
    service.store.close()


def _asking(repo: Path, agent: str, *paths: str, **kw: object) -> OpenClaim:
    head = git(repo, "rev-parse", "HEAD")
    return replace(seed(*paths, agent=agent, ttl=600, **kw), base_commit=head, create_worktree=True)


def _commit(claim: Claim, path: str, old: str, new: str) -> None:
    tree = Path(str(claim.worktree))
    file = tree / path
    file.parent.mkdir(parents=True, exist_ok=True)
    text = file.read_text() if file.exists() else ""
    file.write_text(text.replace(old, new) if old else text + new)
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", f"{claim.id} edits {path}")


def _events(svc: Service, kind: str) -> list[dict[str, object]]:
    return [e.data for e in svc.events(limit=1000)[0] if e.type == kind]


def test_adjacent_edits_of_neighbouring_functions_open_a_room_with_the_hunks(
    svc: Service, repo: Path
) -> None:
    alice = svc.claims.open_claim(_asking(repo, "alice", symbols=("src/calc.py::a",))).claim
    bob = svc.claims.open_claim(_asking(repo, "bob", symbols=("src/calc.py::b",))).claim
    assert alice.status is ClaimStatus.ACTIVE and bob.status is ClaimStatus.ACTIVE
    _commit(alice, "src/calc.py", "return 1", "return 10")
    _commit(bob, "src/calc.py", "def b():", "def b(x=0):")

    result = svc.merge_checks.check(bob.id)

    assert result.checks.merge is not None
    [conflict] = result.checks.merge.conflicts
    assert conflict.against == alice.id and conflict.files == ("src/calc.py",)
    assert set(conflict.symbols) == {"src/calc.py::a", "src/calc.py::b"}
    [room] = result.meetings
    assert set(room.participants) == {alice.id, bob.id}
    assert [t.target for t in room.contested_targets] == ["src/calc.py"]
    [witness] = room.merge_conflicts
    [hunk] = witness["hunks"]
    assert "return 10" in hunk["text"] and "def b(x=0):" in hunk["text"]
    assert hunk["text"].startswith("<<<<<<<")
    # Neither claim has completed, and neither stops: the room is advice to talk.
    for claim in (alice, bob):
        assert svc.claims.get_claim(claim.id).claim.status is ClaimStatus.ACTIVE
    assert svc.meetings.get_meeting(room.id).status.value == "open"
    report = svc.audit()  # the chain, projections == replay, and every invariant
    assert report.ok, report


def test_a_second_check_of_a_standing_conflict_keeps_the_one_room(svc: Service, repo: Path) -> None:
    alice = svc.claims.open_claim(_asking(repo, "alice", symbols=("src/calc.py::a",))).claim
    bob = svc.claims.open_claim(_asking(repo, "bob", symbols=("src/calc.py::b",))).claim
    _commit(alice, "src/calc.py", "return 1", "return 10")
    _commit(bob, "src/calc.py", "def b():", "def b(x=0):")

    first = svc.merge_checks.check(bob.id)
    again = svc.merge_checks.check(alice.id)

    assert [m.id for m in again.meetings] == [m.id for m in first.meetings]
    assert len(_events(svc, MEETING_OPENED)) == 1


def test_edits_that_merge_cleanly_open_nothing(svc: Service, repo: Path) -> None:
    alice = svc.claims.open_claim(_asking(repo, "alice", symbols=("src/calc.py::a",))).claim
    carol = svc.claims.open_claim(_asking(repo, "carol", symbols=("src/calc.py::c",))).claim
    _commit(alice, "src/calc.py", "return 1", "return 10")
    _commit(carol, "src/calc.py", "return 3", "return 30")

    result = svc.merge_checks.check(carol.id)

    assert result.checks.merge is not None
    assert result.checks.merge.conflicts == ()
    assert alice.id in result.checks.merge.checked
    assert "ref:refs/heads/main" in result.checks.merge.checked
    assert result.meetings == ()
    assert _events(svc, MEETING_OPENED) == []


def test_a_claim_in_another_directory_is_not_merged_with(svc: Service, repo: Path) -> None:
    alice = svc.claims.open_claim(_asking(repo, "alice", symbols=("src/calc.py::a",))).claim
    dora = svc.claims.open_claim(_asking(repo, "dora", "docs/**")).claim
    _commit(alice, "src/calc.py", "return 1", "return 10")
    _commit(dora, "docs/x.md", "x", "y")

    result = svc.merge_checks.check(dora.id)

    assert result.checks.merge is not None
    assert result.checks.merge.checked == ("ref:refs/heads/main",)


def test_the_room_dissolves_once_a_new_head_merges_cleanly(svc: Service, repo: Path) -> None:
    alice = svc.claims.open_claim(_asking(repo, "alice", symbols=("src/calc.py::a",))).claim
    bob = svc.claims.open_claim(_asking(repo, "bob", symbols=("src/calc.py::b",))).claim
    _commit(alice, "src/calc.py", "return 1", "return 10")
    _commit(bob, "src/calc.py", "def b():", "def b(x=0):")
    [room] = svc.merge_checks.check(bob.id).meetings

    _commit(bob, "src/calc.py", "def b(x=0):", "def b():")  # bob backs his edit out
    svc.merge_checks.check(bob.id)

    assert svc.meetings.get_meeting(room.id).status.value == "resolved"
    assert [d["meetingId"] for d in _events(svc, MEETING_DISSOLVED)] == [room.id]
    assert svc.audit().ok


def test_the_sweep_checks_only_branches_that_moved(svc: Service, repo: Path) -> None:
    alice = svc.claims.open_claim(_asking(repo, "alice", symbols=("src/calc.py::a",))).claim
    bob = svc.claims.open_claim(_asking(repo, "bob", symbols=("src/calc.py::b",))).claim
    _commit(alice, "src/calc.py", "return 1", "return 10")

    svc.sweep()
    svc.sweep()  # nothing moved since

    checked = _events(svc, CLAIM_MERGE_CHECKED)
    assert [d["claimId"] for d in checked] == [alice.id]  # bob's branch is at its base
    assert checked[0]["checked"] == ["ref:refs/heads/main", bob.id]

    _commit(bob, "src/calc.py", "def b():", "def b(x=0):")
    svc.sweep()

    assert [d["claimId"] for d in _events(svc, CLAIM_MERGE_CHECKED)] == [alice.id, bob.id]
    assert len(_events(svc, MEETING_OPENED)) == 1


def test_a_path_changed_outside_the_scope_is_a_drifted_advisory(svc: Service, repo: Path) -> None:
    alice = svc.claims.open_claim(_asking(repo, "alice", "src/**")).claim
    _commit(alice, "src/calc.py", "return 1", "return 10")
    _commit(alice, "docs/x.md", "x", "committed outside")
    (Path(str(alice.worktree)) / "notes.txt").write_text("uncommitted outside\n")

    result = svc.merge_checks.check(alice.id)

    assert result.checks.drifted == ("docs/x.md", "notes.txt")
    [drift] = _events(svc, CLAIM_DRIFTED)
    assert drift["drifted"] == ["docs/x.md", "notes.txt"]
    view = svc.claims.get_claim(alice.id, with_semantic=False)
    assert view.checks is not None and view.checks.drifted == ("docs/x.md", "notes.txt")
    assert view.claim.paths == ("src/**",)  # advice only: the scope is unchanged


def test_work_inside_the_scope_records_no_drift(svc: Service, repo: Path) -> None:
    alice = svc.claims.open_claim(_asking(repo, "alice", "src/**")).claim
    _commit(alice, "src/calc.py", "return 1", "return 10")

    result = svc.merge_checks.check(alice.id)

    assert result.checks.drifted == ()
    assert _events(svc, CLAIM_DRIFTED) == []


def test_auto_claim_adds_a_drifted_path_through_overlap_analysis(svc: Service, repo: Path) -> None:
    (repo / "detente.toml").write_text('[harness]\nunclaimed = "auto-claim"\n')
    alice = svc.claims.open_claim(_asking(repo, "alice", "src/**")).claim
    dora = svc.claims.open_claim(_asking(repo, "dora", "docs/x.md")).claim
    _commit(alice, "src/extra.py", "", "x = 1\n")
    (Path(str(alice.worktree)) / "docs" / "x.md").write_text("alice was here\n")
    (Path(str(alice.worktree)) / "README.md").write_text("new\n")

    result = svc.merge_checks.check(alice.id)

    assert result.auto_claimed == ("README.md", "docs/x.md")
    after = svc.claims.get_claim(alice.id, with_semantic=False)
    # docs/x.md is dora's: the addition waits in a meeting, like any contested scope
    # change, while alice keeps writing what she holds.
    assert after.claim.pending_paths == ("README.md", "docs/x.md")
    assert after.claim.status is ClaimStatus.NEGOTIATING and after.claim.granted
    assert result.status == "negotiating"
    assert any(dora.id in m.participants for m in after.meetings)
    assert svc.claims.get_claim(dora.id, with_semantic=False).claim.status is ClaimStatus.ACTIVE


def test_auto_claim_of_an_unheld_drifted_path_grants_it_at_once(svc: Service, repo: Path) -> None:
    (repo / "detente.toml").write_text('[harness]\nunclaimed = "auto-claim"\n')
    alice = svc.claims.open_claim(_asking(repo, "alice", "src/**")).claim
    _commit(alice, "docs/x.md", "x", "y")

    result = svc.merge_checks.check(alice.id)

    assert result.auto_claimed == ("docs/x.md",) and result.status == "active"
    after = svc.claims.get_claim(alice.id, with_semantic=False).claim
    assert after.paths == ("src/**", "docs/x.md") and after.pending_paths == ()
    assert result.checks.drifted == ()  # covered now: the advisory is cleared
    assert [d["drifted"] for d in _events(svc, CLAIM_DRIFTED)] == [["docs/x.md"], []]


def test_readiness_of_a_session_whose_claim_drifted_is_caution_naming_the_paths(
    svc: Service, repo: Path
) -> None:
    asked = _asking(repo, "alice", "src/**")
    asked = replace(asked, agent=replace(asked.agent, session_id="sess-alice"))
    alice = svc.claims.open_claim(asked).claim
    assert svc.agents.readiness("sess-alice", ["src/calc.py"]).readiness == "ready"
    _commit(alice, "docs/x.md", "x", "y")
    svc.merge_checks.check(alice.id)

    ready = svc.agents.readiness("sess-alice", ["src/calc.py"]).to_wire()

    assert ready["readiness"] == "caution" and ready["overlappingClaims"] == []
    assert ready["advisories"] == [{"claimId": alice.id, "drifted": ["docs/x.md"], "conflicts": []}]
    assert "advisories" not in svc.agents.readiness("someone-else", ["src/calc.py"]).to_wire()


def test_the_merge_room_is_settled_like_any_other_serialize_and_accept(
    svc: Service, repo: Path
) -> None:
    from detente.domain.meetings.commands import Accept, Propose
    from detente.domain.meetings.resolution_types import Serialize

    alice = svc.claims.open_claim(_asking(repo, "alice", symbols=("src/calc.py::a",))).claim
    bob = svc.claims.open_claim(_asking(repo, "bob", symbols=("src/calc.py::b",))).claim
    _commit(alice, "src/calc.py", "return 1", "return 10")
    _commit(bob, "src/calc.py", "def b():", "def b(x=0):")
    [room] = svc.merge_checks.check(bob.id).meetings

    proposed = svc.meetings.propose(
        Propose(room.id, room.revision, alice.id, Serialize(first=alice.id, then=bob.id))
    ).meeting
    [proposal] = proposed.proposals
    done = svc.meetings.accept(Accept(room.id, proposed.revision, bob.id, proposal.id)).meeting

    assert done.status.value == "resolved"
    assert svc.claims.get_claim(bob.id).claim.status is ClaimStatus.SUSPENDED
    assert svc.claims.get_claim(alice.id).claim.status is ClaimStatus.ACTIVE
    assert svc.audit().ok
    # The pair agreed: bob's next commit records the conflict and opens no room again.
    _commit(bob, "src/calc.py", "return 2", "return 20")
    again = svc.merge_checks.check(bob.id)
    assert again.checks.merge is not None and len(again.checks.merge.conflicts) == 1
    assert again.meetings == ()
    assert len(_events(svc, MEETING_OPENED)) == 1


def test_a_conflict_names_the_definitions_both_branches_changed_where_the_index_knows_them(
    svc: Service, repo: Path
) -> None:
    alice = svc.claims.open_claim(_asking(repo, "alice", "src/**")).claim
    dora = svc.claims.open_claim(_asking(repo, "dora", "docs/**")).claim
    _commit(alice, "src/calc.py", "return 1", "return 10")
    _commit(dora, "src/calc.py", "def b():", "def b(x=0):")  # outside her scope: drift too

    result = svc.merge_checks.check(dora.id)

    assert result.checks.merge is not None
    [conflict] = [c for c in result.checks.merge.conflicts if c.against == alice.id]
    assert conflict.symbols == ("src/calc.py::a", "src/calc.py::b")
    assert result.checks.drifted == ("src/calc.py",)
    [room] = result.meetings
    assert set(room.participants) == {alice.id, dora.id}
