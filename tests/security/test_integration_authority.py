"""Integration authority: a holder of ``integrate`` integrates another principal's
``ready_for_review`` claim (review, then merge), recorded with both principals; nobody
else may, and no claim that is not ready."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from detente.cli.main import app
from detente.errors import ForbiddenError
from detente.operations.claims import COMPLETE, GET_CLAIM
from detente.operations.door import Operations
from detente.runtime import build_service
from detente.security.identity import Principal, acting_as

from support import git_out, isolate_environment

BOB = Principal("oidc:bob", "oidc", roles=frozenset({"claim", "integrate", "read"}))
CAROL = Principal("oidc:carol", "oidc", roles=frozenset({"claim", "read"}))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_environment(tmp_path, monkeypatch)
    monkeypatch.setenv("DETENTE_LOCAL", "1")
    root = tmp_path / "repo"
    root.mkdir()
    git_out(root, "init", "-q", "-b", "main")
    git_out(root, "config", "user.name", "Test User")
    git_out(root, "config", "user.email", "test@example.com")
    (root / "a.py").write_text("a = 1\n")
    git_out(root, "add", "-A")
    git_out(root, "commit", "-q", "-m", "initial")
    return root


def _cli(repo: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["--repo", str(repo), *args, "--json"])
    assert result.exit_code in (0, 6), result.stdout
    return dict(json.loads(result.stdout))


def _ready_claim(repo: Path, path: str) -> dict[str, Any]:
    """A claim of the local principal, worked and completed without integrating."""
    claim = _cli(repo, "claim", "open", "-o", f"edit {path}", "-p", path, "--agent", "a")["claim"]
    worktree = Path(claim["worktree"])
    (worktree / path).write_text("changed\n")
    git_out(worktree, "add", "-A")
    git_out(worktree, "commit", "-q", "-m", f"edit {path}")
    ready = _cli(repo, "claim", "complete", claim["id"], "--no-integrate")["claim"]
    assert ready["status"] == "ready_for_review"
    return dict(ready)


def _integrate(ops: Operations, who: Principal, claim_id: str) -> dict[str, Any]:
    with acting_as(who):
        claim = ops.call(GET_CLAIM, path={"claim_id": claim_id})["claim"]
        evidence = dict(claim.get("evidence") or {})
        head = git_out(Path(claim["worktree"]), "rev-parse", "HEAD")
        base = dict(evidence.pop("expectedBaseRef", None) or {"ref": "refs/heads/main"})
        base.setdefault("oid", claim["baseCommit"])
        evidence.setdefault("headCommit", head)
        for key in ("stale", "staleReason"):
            evidence.pop(key, None)
        body = {
            "expectedClaimRevision": claim["revision"],
            "fencingToken": claim["fencingToken"],
            "expectedBaseRef": base,
            "evidence": evidence,
        }
        return dict(ops.call(COMPLETE, path={"claim_id": claim_id}, body=body)["claim"])


def test_an_integrator_merges_another_principals_ready_claim_and_the_log_names_both(
    repo: Path,
) -> None:
    ready = _ready_claim(repo, "a.py")
    service = build_service([repo])
    ops = Operations(service)
    try:
        with pytest.raises(ForbiddenError):
            _integrate(ops, CAROL, ready["id"])  # no integrate role
        done = _integrate(ops, BOB, ready["id"])
        events, _ = service.events(since=0, limit=1000)
    finally:
        service.store.close()

    assert done["status"] in ("integrated", "completed") and done["principal"] == "local"
    mine = [e for e in events if e.subject == f"claim/{ready['id']}"]
    integration = [e for e in mine if e.type in ("claim.integrated", "claim.completed")]
    assert integration and {e.data["actor"]["principal"] for e in integration} == {"oidc:bob"}
    assert mine[0].data["actor"]["principal"] == "local"  # the claim's own principal
    assert git_out(repo, "rev-parse", "refs/heads/main") == ready["evidence"]["headCommit"]


def test_an_integrator_may_not_complete_another_principals_claim_that_is_not_ready(
    repo: Path,
) -> None:
    claim = _cli(repo, "claim", "open", "-o", "edit", "-p", "a.py", "--agent", "a")["claim"]
    service = build_service([repo])
    try:
        with pytest.raises(ForbiddenError) as refused:
            _integrate(Operations(service), BOB, claim["id"])
    finally:
        service.store.close()
    assert refused.value.extra["owner"] == "local"
