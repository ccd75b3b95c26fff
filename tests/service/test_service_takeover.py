"""Expiry, abandonment and takeover on a real git repository (SQLite store, fake clock)."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import RenewLease, SetStatus, TakeoverRequest
from detente.domain.claims.model import ClaimStatus
from detente.domain.policy import Policy
from detente.errors import (
    BranchInUse,
    ForbiddenError,
    InvalidTransition,
    LeaseExpired,
    OverlapBlocking,
    StaleFencingToken,
    ValidationError,
)
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from detente.vcs.repo import resolve_commit
from detente.vcs.worktrees import create_worktree, list_worktrees

from support import seed


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('v1')\n")
    (root / "README.md").write_text("# demo\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture
def svc(repo: Path, tmp_path: Path, clock: FakeClock) -> Service:
    return Service(
        SqliteStore(tmp_path / "d.db"),
        clock,
        [RepoConfig("demo", path=repo)],
        policy=Policy(takeover_grace_seconds=5),
        resolve_commit=resolve_commit,
    )


def _open_with_worktree(svc: Service, repo: Path, tmp_path: Path, name: str, *paths: str) -> str:
    base = git(repo, "rev-parse", "HEAD")
    wt = tmp_path / f"wt-{name}"
    branch = f"claim/{name}"
    claim = svc.claims.open_claim(
        replace(seed(*paths, agent=name, ttl=10), base_commit=base, branch=branch, worktree=str(wt))
    ).claim
    create_worktree(repo, wt, branch, base)
    return claim.id


def _takeover(
    svc: Service, pred: str, *paths: str, agent: str = "bob", **kw: object
) -> TakeoverRequest:
    rev = svc.claims.get_claim(pred).claim.revision
    return TakeoverRequest(pred, rev, **kw)  # type: ignore[arg-type]


def test_a_crashed_agents_claim_can_be_taken_over_only_after_its_ttl_and_grace(
    svc: Service, repo: Path, tmp_path: Path, clock: FakeClock
) -> None:
    a = _open_with_worktree(svc, repo, tmp_path, "alice", "src/**")
    b_seed = replace(seed("src/**", agent="bob"), base_commit="")
    with pytest.raises(InvalidTransition, match="still heartbeats"):
        svc.takeover.take_over(b_seed, _takeover(svc, a))
    clock.advance(11)
    with pytest.raises(InvalidTransition, match="grace period"):
        svc.takeover.take_over(b_seed, _takeover(svc, a))
    clock.advance(5)
    b = svc.takeover.take_over(b_seed, _takeover(svc, a)).claim
    assert b.status is ClaimStatus.ACTIVE
    predecessor = svc.claims.get_claim(a).claim
    assert predecessor.status is ClaimStatus.TAKEN_OVER and predecessor.successor_id == b.id
    assert b.takeover is not None and b.takeover["claimId"] == a
    assert b.takeover["previousOwner"] == {"id": "alice", "name": "alice", "sessionId": None}
    assert b.takeover["headCommit"] == git(repo, "rev-parse", "claim/alice")
    assert b.fencing_token > predecessor.fencing_token
    assert b.base_commit == predecessor.base_commit
    assert svc.audit().ok


def test_the_predecessor_is_fenced_off_after_a_takeover(
    svc: Service, repo: Path, tmp_path: Path, clock: FakeClock
) -> None:
    a = svc.claims.open_claim(
        replace(
            seed("src/app.py", agent="alice", ttl=10), base_commit=git(repo, "rev-parse", "HEAD")
        )
    ).claim
    clock.advance(16)
    with pytest.raises(LeaseExpired):
        svc.claims.renew(RenewLease(a.id, 1, svc.claims.get_claim(a.id).claim.revision, 10))
    b = svc.takeover.take_over(
        replace(seed("src/app.py", agent="bob"), base_commit=""), _takeover(svc, a.id)
    ).claim
    assert svc.claims.check_write(b.id, ["src/app.py"], b.fencing_token) == ["src/app.py"]
    with pytest.raises(StaleFencingToken) as info:
        svc.claims.check_write(a.id, ["src/app.py"], a.fencing_token)
    assert (
        info.value.extra["expected"] == b.fencing_token
        and info.value.extra["actual"] == a.fencing_token
    )
    with pytest.raises(StaleFencingToken):
        svc.claims.check_write(b.id, ["src/app.py"], a.fencing_token)


def test_an_expired_claim_keeps_its_paths_from_anyone_who_does_not_take_it_over(
    svc: Service, repo: Path, tmp_path: Path, clock: FakeClock
) -> None:
    a = _open_with_worktree(svc, repo, tmp_path, "alice", "src/**")
    clock.advance(11)
    c = svc.claims.open_claim(
        replace(seed("src/app.py", agent="carol"), base_commit=git(repo, "rev-parse", "HEAD"))
    )
    assert c.claim.status is ClaimStatus.NEGOTIATING
    with pytest.raises(OverlapBlocking):
        svc.claims.check_write(c.claim.id, ["src/app.py"])
    assert svc.claims.get_claim(a).claim.status is ClaimStatus.EXPIRED


def test_uncommitted_work_is_saved_under_a_rescue_ref_byte_for_byte(
    svc: Service, repo: Path, tmp_path: Path, clock: FakeClock
) -> None:
    a = _open_with_worktree(svc, repo, tmp_path, "alice", "src/**", "notes/**")
    wt = tmp_path / "wt-alice"
    staged = "print('staged ✓')\n"
    (wt / "src" / "app.py").write_text(staged)
    git(wt, "add", "src/app.py")
    (wt / "README.md").write_text("# unstaged edit\n")
    (wt / "notes").mkdir()
    untracked = bytes(range(256))
    (wt / "notes" / "blob.bin").write_bytes(untracked)
    clock.advance(16)
    b = svc.takeover.take_over(
        replace(seed("src/**", agent="bob"), base_commit=""), _takeover(svc, a)
    ).claim
    rescue = b.takeover["rescue"] if b.takeover else None
    assert rescue is not None and rescue["ref"] == f"refs/detente/rescue/{a}"
    assert git(repo, "rev-parse", rescue["ref"]) == rescue["oid"]
    shown = subprocess.run(
        ["git", "show", f"{rescue['oid']}:notes/blob.bin"],
        cwd=repo,
        check=True,
        capture_output=True,
    ).stdout
    assert shown == untracked
    assert git(repo, "show", f"{rescue['oid']}:src/app.py") + "\n" == staged
    assert git(repo, "show", f"{rescue['oid']}:README.md") == "# unstaged edit"
    assert git(repo, "show", f"{rescue['oid']}^2:src/app.py") + "\n" == staged  # the index commit
    assert (wt / "README.md").read_text() == "# unstaged edit\n"  # the worktree is untouched
    events, _ = svc.events(limit=1000)
    taken = [e for e in events if e.type == "claim.taken_over"]
    assert taken and taken[0].data["rescue"]["oid"] == rescue["oid"]


def test_a_takeover_of_a_contract_change_waits_for_approval(
    svc: Service, repo: Path, clock: FakeClock
) -> None:
    (repo / "CODEOWNERS").write_text("src/ @api-owner\n")
    a = svc.claims.open_claim(
        replace(
            seed("src/api.py", agent="alice", ttl=10, expected_contract_changes=("api/v2",)),
            base_commit=git(repo, "rev-parse", "HEAD"),
        )
    ).claim
    clock.advance(16)
    b = svc.takeover.take_over(
        replace(seed("src/api.py", agent="bob"), base_commit=""), _takeover(svc, a.id)
    ).claim
    assert b.status is ClaimStatus.BLOCKED
    assert b.takeover is not None and b.takeover["pending"] is True
    assert b.takeover["owners"] == ["@api-owner"]
    assert svc.claims.get_claim(a.id).claim.status is ClaimStatus.EXPIRED
    with pytest.raises(ForbiddenError):
        svc.takeover.approve_takeover(b.id, b.revision, "@random", "owner")
    approved = svc.takeover.approve_takeover(b.id, b.revision, "@api-owner", "owner").claim
    assert approved.status is ClaimStatus.ACTIVE
    assert (
        approved.takeover is not None
        and approved.takeover["approvals"][0]["approver"] == "@api-owner"
    )
    assert svc.claims.get_claim(a.id).claim.status is ClaimStatus.TAKEN_OVER
    events, _ = svc.events(limit=1000)
    assert [e.type for e in events].count("claim.takeover_approved") == 1


def test_an_abandoned_claim_needs_no_grace_and_discarded_pieces_are_released(
    svc: Service, repo: Path
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    a = svc.claims.open_claim(
        replace(seed("src/app.py", "docs/**", agent="alice"), base_commit=base)
    ).claim
    svc.claims.set_status(
        SetStatus(a.id, a.revision, ClaimStatus.ABANDONED, details={"headCommit": base})
    )
    b = svc.takeover.take_over(
        replace(seed("src/app.py", agent="bob"), base_commit=""),
        TakeoverRequest(a.id, svc.claims.get_claim(a.id).claim.revision, (("docs/**", "discard"),)),
    ).claim
    assert b.paths == ("src/app.py",)
    assert b.takeover is not None
    assert {"target": "docs/**", "decision": "discard"} in b.takeover["pieces"]
    c = svc.claims.open_claim(replace(seed("docs/x.md", agent="carol"), base_commit=base)).claim
    assert c.status is ClaimStatus.ACTIVE


def test_cleanup_prunes_only_the_predecessors_missing_worktree_never_a_live_one(
    svc: Service, repo: Path, tmp_path: Path, clock: FakeClock
) -> None:
    a = _open_with_worktree(svc, repo, tmp_path, "alice", "src/**")
    b = _open_with_worktree(svc, repo, tmp_path, "bob", "docs/**")
    (tmp_path / "wt-alice").rename(tmp_path / "alice-gone")
    subprocess.run(["rm", "-rf", str(tmp_path / "alice-gone")], check=True)
    (tmp_path / "wt-bob").rename(tmp_path / "bob-away")  # temporarily missing
    clock.advance(8)
    svc.claims.renew(RenewLease(b, 1, svc.claims.get_claim(b).claim.revision, 60))
    clock.advance(8)
    c = svc.takeover.take_over(
        replace(seed("src/**", agent="carol"), base_commit=""), _takeover(svc, a)
    ).claim
    assert c.takeover is not None and c.takeover["worktreeState"]["pruned"] is True
    entries = {e.path.name: e for e in list_worktrees(repo)}
    assert "wt-alice" not in entries
    assert "wt-bob" in entries and entries["wt-bob"].locked is not None
    assert "claim/bob" in git(repo, "branch", "--list", "claim/bob")
    (tmp_path / "bob-away").rename(tmp_path / "wt-bob")
    assert git(tmp_path / "wt-bob", "rev-parse", "--abbrev-ref", "HEAD") == "claim/bob"


def test_a_refused_takeover_changes_nothing(svc: Service, repo: Path, tmp_path: Path) -> None:
    a = _open_with_worktree(svc, repo, tmp_path, "alice", "src/**")
    (tmp_path / "wt-alice" / "dirty.txt").write_text("x")
    head = svc.head()
    with pytest.raises(InvalidTransition):
        svc.takeover.take_over(
            replace(seed("src/**", agent="bob"), base_commit=""), _takeover(svc, a)
        )
    assert svc.head() == head
    assert git(repo, "for-each-ref", "refs/detente/") == ""


def test_cleanup_of_a_finished_claim_touches_only_its_own_worktree(
    svc: Service, repo: Path, tmp_path: Path
) -> None:
    a = _open_with_worktree(svc, repo, tmp_path, "alice", "src/**")
    b = _open_with_worktree(svc, repo, tmp_path, "bob", "docs/**")
    (tmp_path / "wt-alice" / "scratch.txt").write_text("unsaved thought\n")
    (tmp_path / "wt-bob").rename(tmp_path / "bob-away")  # B's directory temporarily missing
    with pytest.raises(InvalidTransition, match="never cleaned"):
        svc.takeover.cleanup_worktree(b)
    claim_a = svc.claims.get_claim(a).claim
    svc.claims.set_status(SetStatus(a, claim_a.revision, ClaimStatus.ABANDONED))
    cleaned = svc.takeover.cleanup_worktree(a)
    entries = {e.path.name for e in list_worktrees(repo)}
    assert "wt-alice" not in entries and "wt-bob" in entries
    assert not (tmp_path / "wt-alice").exists()
    rescue = git(repo, "rev-parse", f"refs/detente/rescue/{a}")
    assert git(repo, "show", f"{rescue}:scratch.txt") == "unsaved thought"
    assert "claim/alice" in git(repo, "branch", "--list", "claim/alice")
    assert cleaned.claim.status is ClaimStatus.ABANDONED
    work = svc.claims.get_claim(a, with_work=True).work
    assert work is not None and work["worktree"]["exists"] is False
    assert work["rescue"]["oid"] == rescue


def test_an_expired_claims_record_shows_the_work_it_left(
    svc: Service, repo: Path, tmp_path: Path, clock: FakeClock
) -> None:
    a = _open_with_worktree(svc, repo, tmp_path, "alice", "src/**")
    wt = tmp_path / "wt-alice"
    (wt / "src" / "app.py").write_text("print('v2')\n")
    git(wt, "-c", "user.name=a", "-c", "user.email=a@x", "commit", "-qam", "v2")
    clock.advance(11)
    view = svc.claims.get_claim(a, with_work=True)
    assert view.claim.status is ClaimStatus.EXPIRED
    assert view.work is not None
    assert view.work["branchHead"] == git(wt, "rev-parse", "HEAD")
    assert view.work["commitsSinceBase"] == 1
    assert view.work["worktree"] == {"path": str(wt), "exists": True}


def test_a_worktree_field_naming_the_main_checkout_is_refused_and_nothing_touched(
    svc: Service, repo: Path
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("# someone's unsaved work\n")
    with pytest.raises(ValidationError) as refused:
        svc.claims.open_claim(
            replace(seed("src/**", agent="alice", ttl=10), base_commit=base, worktree=str(repo))
        )
    assert refused.value.field == "worktree"
    assert svc.claims.list_claims() == []
    assert git(repo, "for-each-ref", "refs/detente/") == ""
    assert (repo / "README.md").read_text() == "# someone's unsaved work\n"


def test_a_category_left_out_of_the_approval_gates_lets_the_takeover_through(
    repo: Path, tmp_path: Path, clock: FakeClock
) -> None:
    svc = Service(
        SqliteStore(tmp_path / "gates.db"),
        clock,
        [RepoConfig("demo", path=repo)],
        policy=Policy(takeover_grace_seconds=5, approval_gates=("memory", "migrations")),
        resolve_commit=resolve_commit,
    )
    a = svc.claims.open_claim(
        replace(
            seed("src/api.py", agent="alice", ttl=10, expected_contract_changes=("api/v2",)),
            base_commit=git(repo, "rev-parse", "HEAD"),
        )
    ).claim
    clock.advance(16)
    b = svc.takeover.take_over(
        replace(seed("src/api.py", agent="bob"), base_commit=""), _takeover(svc, a.id)
    ).claim
    assert b.status is ClaimStatus.ACTIVE  # contract changes are not gated here
    assert svc.claims.get_claim(a.id).claim.status is ClaimStatus.TAKEN_OVER


def test_a_claim_naming_another_live_claims_branch_or_worktree_is_refused(
    svc: Service, repo: Path, tmp_path: Path
) -> None:
    victim = _open_with_worktree(svc, repo, tmp_path, "alice", "src/**")
    base = git(repo, "rev-parse", "HEAD")
    head = svc.head()
    squat = replace(seed("squat/**", agent="mallory", ttl=10), base_commit=base)
    with pytest.raises(BranchInUse, match=victim):
        svc.claims.open_claim(replace(squat, branch="claim/alice"))
    with pytest.raises(BranchInUse, match=victim):
        svc.claims.open_claim(replace(squat, worktree=str(tmp_path / "wt-alice") + "/"))
    assert svc.head() == head


def test_cleanup_never_removes_a_worktree_a_live_claim_records(
    svc: Service, repo: Path, tmp_path: Path
) -> None:
    victim = _open_with_worktree(svc, repo, tmp_path, "alice", "src/**")
    (tmp_path / "wt-alice" / "WIP.txt").write_text("unsaved\n")
    victim_claim = svc.claims.get_claim(victim).claim
    svc.claims.set_status(SetStatus(victim, victim_claim.revision, ClaimStatus.ABANDONED))
    # A second claim takes the freed worktree path, then the first one is cleaned up.
    base = git(repo, "rev-parse", "HEAD")
    heir = svc.claims.open_claim(
        replace(
            seed("lib/**", agent="bob", ttl=10),
            base_commit=base,
            branch="claim/alice",
            worktree=str(tmp_path / "wt-alice"),
        )
    ).claim
    with pytest.raises(BranchInUse, match=heir.id):
        svc.takeover.cleanup_worktree(victim)
    assert (tmp_path / "wt-alice" / "WIP.txt").read_text() == "unsaved\n"


@pytest.mark.parametrize(
    "spelling",
    [
        {"branch": "refs/heads/claim/alice"},
        {"worktree": "{tmp}/other/../wt-alice"},
        {"worktree": "{tmp}/./wt-alice/"},
    ],
)
def test_another_spelling_of_a_live_claims_branch_or_worktree_is_refused_too(
    svc: Service, repo: Path, tmp_path: Path, spelling: dict[str, str]
) -> None:
    victim = _open_with_worktree(svc, repo, tmp_path, "alice", "src/**")
    base = git(repo, "rev-parse", "HEAD")
    given = {k: v.replace("{tmp}", str(tmp_path)) for k, v in spelling.items()}
    squat = replace(seed("squat/**", agent="mallory", ttl=10), base_commit=base, **given)
    with pytest.raises(BranchInUse, match=victim):
        svc.claims.open_claim(squat)


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"branch": "claim/alice "}, "branch"),
        ({"branch": "a..b"}, "branch"),
        ({"branch": "x~1"}, "branch"),
        ({"worktree": "relative/wt"}, "worktree"),
    ],
)
def test_a_branch_git_would_refuse_or_a_relative_worktree_is_a_validation_error(
    svc: Service, repo: Path, given: dict[str, str], field: str
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    with pytest.raises(ValidationError) as refused:
        svc.claims.open_claim(replace(seed("x/**", agent="m", ttl=10), base_commit=base, **given))
    assert refused.value.field == field
