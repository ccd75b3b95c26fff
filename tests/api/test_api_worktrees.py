"""``POST /v1/claims`` with ``createWorktree``: the server places the claim's worktree next
to its own checkout of the repository, inside the command that records the claim."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from api.conftest import running
from detente.clock import FakeClock
from detente.runtime import build_service

from support import git_out


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "pay.py").write_text("retries = 1\n")
    git_out(tmp_path, "init", "-q", "-b", "main", str(root))
    git_out(root, "add", "-A")
    git_out(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def http(repo: Path, tmp_path: Path) -> Iterator[httpx.Client]:
    service = build_service(
        [repo], store_url=f"sqlite:///{tmp_path / 'detente.db'}", clock=FakeClock()
    )
    try:
        with running(service) as base, httpx.Client(base_url=base, timeout=30) as client:
            yield client
    finally:
        service.store.close()


def _seed(repo: Path, **extra: object) -> dict[str, object]:
    return {
        "repo": "shop",
        "objective": "Retry payments",
        "baseCommit": git_out(repo, "rev-parse", "HEAD"),
        "paths": ["src/**"],
        "agent": {"id": "remote", "name": "remote"},
        **extra,
    }


def _head(http: httpx.Client) -> int:
    return int(http.get("/healthz").json()["head"])


def test_a_claim_opened_over_http_asking_for_a_worktree_gets_one_next_to_the_servers_checkout(
    http: httpx.Client, repo: Path
) -> None:
    r = http.post("/v1/claims", json=_seed(repo, createWorktree=True))

    assert r.status_code == 201, r.text
    claim = r.json()["claim"]
    worktree = Path(claim["worktree"])
    assert worktree == repo.parent / "shop.worktrees" / claim["branch"].removeprefix("claim/")
    assert claim["branch"] == f"claim/retry-payments-{claim['id'][-8:]}"
    assert git_out(worktree, "rev-parse", "HEAD") == claim["baseCommit"]
    assert git_out(worktree, "symbolic-ref", "--short", "HEAD") == claim["branch"]
    assert (worktree / "src" / "pay.py").read_text() == "retries = 1\n"


def test_a_claim_asking_for_a_worktree_at_a_chosen_place_gets_it_there(
    http: httpx.Client, repo: Path, tmp_path: Path
) -> None:
    place = tmp_path / "elsewhere" / "wt"

    r = http.post(
        "/v1/claims", json=_seed(repo, createWorktree=True, worktree=str(place), branch="pay")
    )

    assert r.status_code == 201, r.text
    assert r.json()["claim"]["worktree"] == str(place)
    assert git_out(place, "symbolic-ref", "--short", "HEAD") == "pay"


@pytest.mark.parametrize(
    "refusal", ["branch-checked-out-elsewhere", "path-exists", "protected-branch"]
)
def test_git_refusing_the_worktree_records_nothing_and_leaves_no_branch(
    http: httpx.Client, repo: Path, tmp_path: Path, refusal: str
) -> None:
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine\n")
    git_out(repo, "worktree", "add", "-q", "-b", "busy", str(tmp_path / "busy"))
    extra: dict[str, object] = {
        "branch-checked-out-elsewhere": {"branch": "busy"},
        "path-exists": {"worktree": str(occupied)},
        "protected-branch": {"branch": "main"},
    }[refusal]
    head = _head(http)
    branches = git_out(repo, "branch", "--list")

    r = http.post("/v1/claims", json=_seed(repo, createWorktree=True, **extra))

    expected = (
        (409, "branch_in_use") if extra.get("branch") == "busy" else (422, "validation_error")
    )
    assert (r.status_code, r.json()["code"]) == expected, r.text
    assert _head(http) == head
    assert http.get("/v1/claims").json()["claims"] == []
    assert git_out(repo, "branch", "--list") == branches
    assert git_out(repo, "worktree", "list", "--porcelain").count("worktree ") == 2
    assert (occupied / "notes.txt").read_text() == "mine\n"
    assert not (repo.parent / "shop.worktrees").exists()


def test_a_refused_claim_leaves_no_worktree_behind(http: httpx.Client, repo: Path) -> None:
    head = _head(http)

    r = http.post("/v1/claims", json=_seed(repo, createWorktree=True, leaseTtlSeconds=0))

    assert r.status_code == 422, r.text
    assert _head(http) == head
    assert git_out(repo, "branch", "--list", "claim/*") == ""
    assert not (repo.parent / "shop.worktrees").exists()


def test_a_draft_asking_for_a_worktree_is_refused(http: httpx.Client, repo: Path) -> None:
    r = http.post("/v1/claims", json=_seed(repo, createWorktree=True, draft=True))

    assert (r.status_code, r.json()["field"]) == (422, "createWorktree")
    assert git_out(repo, "branch", "--list", "claim/*") == ""
