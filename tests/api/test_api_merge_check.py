"""``POST /v1/claims/{id}/merge-check`` over HTTP: a predicted conflict between two
claims' branches opens a room with the hunks; a claim naming no branch is refused and
nothing is recorded. A real server, a real git repository."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.conftest import running
from detente.clock import FakeClock
from detente.runtime import build_service

from support import git_out

CALC = "def a():\n    return 1\ndef b():\n    return 2\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    git_out(tmp_path, "init", "-q", "-b", "main", str(root))
    git_out(root, "add", "-A")
    git_out(root, "commit", "-q", "-m", "initial")
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


def _open(http: httpx.Client, repo: Path, agent: str, symbol: str, **extra: Any) -> Any:
    body = {
        "repo": "shop",
        "objective": f"{agent} edits {symbol}",
        "baseCommit": git_out(repo, "rev-parse", "HEAD"),
        "symbols": [symbol],
        "agent": {"id": agent, "name": agent},
        **extra,
    }
    answer = http.post("/v1/claims", json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()["claim"]


def _commit(claim: dict[str, Any], old: str, new: str) -> None:
    tree = Path(claim["worktree"])
    (tree / "calc.py").write_text((tree / "calc.py").read_text().replace(old, new))
    git_out(tree, "commit", "-q", "-am", "edit")


def test_a_predicted_conflict_opens_a_room_with_the_hunks(http: httpx.Client, repo: Path) -> None:
    alice = _open(http, repo, "alice", "calc.py::a", createWorktree=True)
    bob = _open(http, repo, "bob", "calc.py::b", createWorktree=True)
    _commit(alice, "return 1", "return 10")
    _commit(bob, "def b():", "def b(x=0):")

    answer = http.post(f"/v1/claims/{bob['id']}/merge-check")

    assert answer.status_code == 200, answer.text
    body = answer.json()
    [conflict] = body["mergeCheck"]["conflicts"]
    assert conflict["against"] == alice["id"] and conflict["files"] == ["calc.py"]
    [room] = body["meetings"]
    assert sorted(room["participants"]) == sorted([alice["id"], bob["id"]])
    assert "def b(x=0):" in room["mergeConflicts"][0]["hunks"][0]["text"]
    status = http.get(f"/v1/claims/{alice['id']}").json()
    assert status["claim"]["status"] == "active"
    assert http.get(f"/v1/claims/{bob['id']}").json()["checks"]["mergeCheck"]["conflicts"]


def test_a_claim_naming_no_branch_is_refused_and_nothing_is_recorded(
    http: httpx.Client, repo: Path
) -> None:
    alice = _open(http, repo, "alice", "calc.py::a")
    head = http.get("/healthz").json()["head"]

    answer = http.post(f"/v1/claims/{alice['id']}/merge-check")

    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "validation_error"
    assert http.get("/healthz").json()["head"] == head
    assert http.post("/v1/claims/clm_nope/merge-check").status_code == 404
