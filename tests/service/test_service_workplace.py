"""Where a claim works is its own: never the protected branch, never another checkout of
the repository (its main working tree, or a worktree of another branch). Refused with a
422 naming the field, and nothing recorded, whichever way the claim is opened."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from api.conftest import running
from detente.clock import FakeClock
from detente.domain.claims.commands import OpenClaim, TakeoverRequest
from detente.errors import ValidationError
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from detente.vcs.repo import resolve_commit

from support import claim_body, seed


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
def svc(repo: Path, tmp_path: Path) -> Iterator[Service]:
    service = Service(
        SqliteStore(tmp_path / "d.db"),
        FakeClock(),
        [RepoConfig("demo", path=repo, main_worktree=repo)],
        resolve_commit=resolve_commit,
    )
    yield service
    service.store.close()


def _seed(repo: Path, **kw: object) -> OpenClaim:
    return replace(seed("src/**", ttl=60), base_commit=git(repo, "rev-parse", "HEAD"), **kw)


def _refused(svc: Service, cmd: OpenClaim, field: str) -> None:
    with pytest.raises(ValidationError) as refused:
        svc.claims.open_claim(cmd)
    assert refused.value.field == field
    assert svc.claims.list_claims() == []


@pytest.mark.parametrize("branch", ["main", "refs/heads/main"])
@pytest.mark.parametrize("create", [False, True])
def test_a_claim_never_takes_the_protected_branch(
    svc: Service, repo: Path, branch: str, create: bool
) -> None:
    _refused(svc, _seed(repo, branch=branch, create_worktree=create), "branch")
    assert git(repo, "worktree", "list").count("\n") == 0  # no worktree was made


def test_a_claim_never_works_in_the_repositorys_own_working_tree(svc: Service, repo: Path) -> None:
    _refused(svc, _seed(repo, branch="feature", worktree=str(repo)), "worktree")
    _refused(svc, _seed(repo, worktree=str(repo) + "/"), "worktree")


def test_a_claim_never_works_in_another_branchs_worktree_but_may_name_its_own(
    svc: Service, repo: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "other", str(other))
    _refused(svc, _seed(repo, branch="mine", worktree=str(other)), "worktree")
    _refused(svc, _seed(repo, worktree=str(other)), "worktree")

    opened = svc.claims.open_claim(_seed(repo, branch="other", worktree=str(other))).claim
    assert (opened.branch, opened.worktree) == ("other", str(other))


def test_a_takeover_never_takes_the_protected_branch(svc: Service, repo: Path) -> None:
    pred = svc.claims.open_claim(_seed(repo, branch="work")).claim
    from detente.domain.claims.commands import SetStatus
    from detente.domain.claims.model import ClaimStatus

    svc.claims.set_status(SetStatus(pred.id, pred.revision, ClaimStatus.ABANDONED, "gone"))
    pred = svc.claims.get_claim(pred.id).claim
    successor = replace(seed("src/**", agent="bob", ttl=60), base_commit="", branch="main")
    with pytest.raises(ValidationError) as refused:
        svc.takeover.take_over(successor, TakeoverRequest(pred.id, pred.revision))
    assert refused.value.field == "branch"


def test_over_http_the_protected_branch_and_the_main_checkout_are_422_naming_the_field(
    svc: Service, repo: Path
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    with running(svc) as base, httpx.Client(base_url=base, timeout=10) as http:
        for extra, field in (
            ({"branch": "refs/heads/main"}, "branch"),
            ({"branch": "main"}, "branch"),
            ({"worktree": str(repo)}, "worktree"),
        ):
            r = http.post("/v1/claims", json=claim_body("a.py", baseCommit=head, **extra))
            assert r.status_code == 422, r.text
            assert r.json()["field"] == field
        assert http.get("/v1/claims", params={"repo": "demo"}).json()["claims"] == []


@pytest.mark.parametrize("create", [False, True])
def test_a_claim_never_works_in_a_directory_inside_another_checkout(
    svc: Service, repo: Path, tmp_path: Path, create: bool
) -> None:
    # Inside the main working tree, git there would list the worktree as untracked and a
    # `git add -A` would record it as an embedded repository.
    _refused(svc, _seed(repo, worktree=str(repo / "nested"), create_worktree=create), "worktree")
    _refused(svc, _seed(repo, worktree=str(repo / "src" / "deep" / "wt")), "worktree")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "other", str(other))
    _refused(svc, _seed(repo, worktree=str(other / "inner")), "worktree")
    assert not (repo / "nested").exists()
    assert git(repo, "status", "--porcelain") == ""


def test_a_worktree_inside_the_checkout_where_git_ignores_it_is_allowed(
    svc: Service, repo: Path
) -> None:
    (repo / ".gitignore").write_text(".worktrees/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore worktrees")
    where = repo / ".worktrees" / "mine"

    opened = svc.claims.open_claim(_seed(repo, worktree=str(where), create_worktree=True)).claim

    assert opened.worktree == str(where) and (where / "src" / "app.py").exists()
    assert git(repo, "status", "--porcelain") == ""
