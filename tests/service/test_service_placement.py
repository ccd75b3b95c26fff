"""Worktrees placed by the service: created inside the command that records the claim,
under one rule (git refusing records nothing; a command that records nothing leaves no
worktree), on a real git repository."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import OpenClaim, SetStatus, TakeoverRequest
from detente.domain.claims.model import ClaimStatus
from detente.domain.policy import Policy
from detente.errors import BranchInUse, StoreError
from detente.service import RepoConfig, Service
from detente.storage.base import StoreTx
from detente.storage.sqlite import SqliteStore
from detente.vcs.repo import resolve_commit

from support import seed


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('v1')\n")
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
        policy=Policy(takeover_grace_seconds=5),
        resolve_commit=resolve_commit,
    )
    yield service
    service.store.close()


def _asking(repo: Path, *paths: str, agent: str = "alice", **kw: object) -> OpenClaim:
    head = git(repo, "rev-parse", "HEAD")
    return replace(seed(*paths, agent=agent, ttl=10, **kw), base_commit=head, create_worktree=True)


def test_an_opening_asking_for_a_worktree_records_the_branch_and_path_it_created(
    svc: Service, repo: Path
) -> None:
    claim = svc.claims.open_claim(_asking(repo, "src/**")).claim

    assert claim.worktree is not None and claim.branch is not None
    assert Path(claim.worktree).parent == repo.parent / "repo.worktrees"
    assert git(Path(claim.worktree), "rev-parse", "HEAD") == claim.base_commit
    assert git(Path(claim.worktree), "symbolic-ref", "--short", "HEAD") == claim.branch


def test_a_failed_append_leaves_no_worktree_and_no_branch(
    svc: Service, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = svc.head()

    @contextmanager
    def unavailable(repo_name: str) -> Iterator[StoreTx]:
        raise StoreError("the store went away")
        yield  # pragma: no cover

    monkeypatch.setattr(svc.store, "transaction", unavailable)

    with pytest.raises(StoreError):
        svc.claims.open_claim(_asking(repo, "src/**"))

    monkeypatch.undo()
    assert svc.head() == head
    assert git(repo, "branch", "--list", "claim/*") == ""
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (repo.parent / "repo.worktrees").exists()


def test_an_opening_whose_branch_git_refuses_records_nothing(
    svc: Service, repo: Path, tmp_path: Path
) -> None:
    git(repo, "worktree", "add", "-q", "-b", "busy", str(tmp_path / "busy"))
    head = svc.head()

    with pytest.raises(BranchInUse):
        svc.claims.open_claim(_asking(repo, "src/**", branch="busy"))

    assert svc.head() == head
    assert git(repo, "branch", "--list").split() == ["+", "busy", "*", "main"]


def _abandoned_with_work(svc: Service, repo: Path) -> tuple[str, str, Path]:
    """alice's claim with a commit on its branch and an uncommitted edit, abandoned."""
    pred = svc.claims.open_claim(_asking(repo, "src/**")).claim
    assert pred.worktree is not None
    wt = Path(pred.worktree)
    (wt / "src" / "app.py").write_text("print('v2')\n")
    git(wt, "commit", "-q", "-am", "v2")
    (wt / "src" / "app.py").write_text("print('v3, unsaved')\n")
    head = git(wt, "rev-parse", "HEAD")
    svc.claims.set_status(SetStatus(pred.id, pred.revision, ClaimStatus.ABANDONED))
    return pred.id, head, wt


def test_a_takeover_asking_for_a_worktree_starts_at_the_predecessors_head(
    svc: Service, repo: Path
) -> None:
    pred, pred_head, pred_wt = _abandoned_with_work(svc, repo)
    request = TakeoverRequest(pred, svc.claims.get_claim(pred).claim.revision)

    successor = svc.takeover.take_over(
        replace(_asking(repo, "src/**", agent="bob"), base_commit=""),
        request,
    ).claim

    assert successor.worktree is not None and successor.branch is not None
    assert successor.worktree != str(pred_wt)
    assert git(Path(successor.worktree), "rev-parse", "HEAD") == pred_head
    assert successor.takeover is not None
    rescue = successor.takeover["rescue"]
    assert rescue["ref"] == f"refs/detente/rescue/{pred}"
    assert git(repo, "show", f"{rescue['oid']}:src/app.py") == "print('v3, unsaved')"
    assert (pred_wt / "src" / "app.py").read_text() == "print('v3, unsaved')\n"


def test_a_takeover_whose_worktree_git_refuses_records_no_successor(
    svc: Service, repo: Path, tmp_path: Path
) -> None:
    pred, _, _ = _abandoned_with_work(svc, repo)
    request = TakeoverRequest(pred, svc.claims.get_claim(pred).claim.revision)
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine\n")
    head = svc.head()
    branches = git(repo, "branch", "--list")

    with pytest.raises(Exception) as info:
        svc.takeover.take_over(
            replace(
                _asking(repo, "src/**", agent="bob"),
                base_commit="",
                worktree=str(occupied),
            ),
            request,
        )

    assert getattr(info.value, "field", None) == "worktree"
    assert svc.head() == head
    assert git(repo, "branch", "--list") == branches
    assert svc.claims.get_claim(pred).claim.status.value == "abandoned"
