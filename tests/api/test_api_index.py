"""The index routes over real HTTP: symbols a claim touches, reconcile, search."""

from __future__ import annotations

from pathlib import Path

import httpx

from api.conftest import running
from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from source_repo import git, make_source_repo
from support import counting_ids


def test_reconcile_symbols_and_search_answer_over_http(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    head = make_source_repo(root)
    tree = tmp_path / "alice"
    git(root, "worktree", "add", "-q", "-b", "alice", str(tree), head)
    retry = tree / "src/settlement/retry.py"
    retry.write_text(retry.read_text().replace("attempt > 8", "attempt > 4"))
    service = Service(
        SqliteStore(tmp_path / "d.db"),
        FakeClock(),
        [RepoConfig("demo", path=root)],
        ids=counting_ids(),
    )
    with running(service) as base, httpx.Client(base_url=base) as http:
        opened = http.post(
            "/v1/claims",
            json={
                "repo": "demo",
                "objective": "Stop retrying sooner",
                "baseCommit": head,
                "symbols": ["RetryPolicy.give_up"],
                "branch": "alice",
                "worktree": str(tree),
                "leaseTtlSeconds": 600,
                "agent": {"id": "alice", "name": "alice"},
            },
        )
        assert opened.status_code == 201, opened.text
        claim_id = opened.json()["claim"]["id"]
        assert opened.json()["claim"]["symbols"] == ["src/settlement/retry.py::RetryPolicy.give_up"]

        touched = http.get(f"/v1/claims/{claim_id}/symbols").json()
        assert touched["symbols"] == ["src/settlement/retry.py::RetryPolicy.give_up"]
        assert touched["outsideScope"] == []

        reconciled = http.post(
            "/v1/reconcile",
            json={
                "a": {"claimId": claim_id, "actual": True},
                "b": {"symbols": ["Ledger.post"], "roughChangeKind": "edit"},
            },
        ).json()
        assert reconciled["overlap"] is False
        assert [(i["symbol"], i["within"]) for i in reconciled["interactions"]] == [
            (
                "src/settlement/retry.py::RetryPolicy.give_up",
                "src/settlement/ledger.py::Ledger.post",
            )
        ]

        ambiguous = http.post(
            "/v1/reconcile", json={"a": {"symbols": ["backoff"]}, "b": {"paths": ["x.py"]}}
        )
        assert ambiguous.status_code == 422
        assert len(ambiguous.json()["candidates"]) == 2

        found = http.get("/v1/search", params={"q": "retry", "repo": "demo"}).json()
        assert found["results"][0]["claimId"] == claim_id
        assert found["similarity"]["mode"] in ("semantic", "lexical")
        assert http.get("/v1/search", params={"q": ""}).status_code == 422
