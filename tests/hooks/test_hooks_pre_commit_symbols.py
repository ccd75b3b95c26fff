"""The pre-commit guard lets a symbol claim commit inside its symbols from any checkout.

A claim without a worktree (committed with ``DETENTE_CLAIM`` in the main checkout) gave
the server no change to read: every commit was judged by whole files, so the claim could
not commit its own function, while ``claim check`` said "allowed, limited to" it. The
hook now sends what its checkout changes in the symbols. Real repository, real
``git commit``, local mode.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hooks_harness import detente, git, run_git

from source_repo import RETRY_PY, STORE_GO, make_source_repo

RETRY = "src/settlement/retry.py"
STORE = "internal/storage/store.go"


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "checkout"
    make_source_repo(root)
    monkeypatch.setenv("DETENTE_LOCAL", "1")
    detente("--repo", str(root), "hooks", "install")
    return root


def _claim(root: Path, agent: str, symbol: str) -> str:
    opened = detente(
        "--repo", str(root), "claim", "open", "-o", f"{agent} work", "--symbol", symbol,
        "--agent", agent, "--no-worktree",
    )  # fmt: skip
    assert opened["claim"]["status"] == "active"
    return str(opened["claim"]["id"])


def _commit(root: Path, path: str, text: str, claim: str) -> tuple[int, str]:
    (root / path).write_text(text)
    git(root, "add", path)
    done = run_git(root, "commit", "-q", "-m", "x", env={"DETENTE_CLAIM": claim})
    return done.returncode, done.stderr


def test_a_symbol_claim_commits_inside_its_symbol_beside_another_claims_function(
    checkout: Path,
) -> None:
    _claim(checkout, "alice", "RetryPolicy.backoff")
    bob = _claim(checkout, "bob", "RetryPolicy.give_up")
    before = git(checkout, "rev-parse", "HEAD")

    code, err = _commit(checkout, RETRY, RETRY_PY.replace("attempt > 8", "attempt > 3"), bob)

    assert code == 0, err
    assert git(checkout, "rev-parse", "HEAD") != before


def test_a_symbol_claim_is_refused_a_commit_into_another_claims_function(
    checkout: Path,
) -> None:
    alice = _claim(checkout, "alice", "RetryPolicy.backoff")
    bob = _claim(checkout, "bob", "RetryPolicy.give_up")
    before = git(checkout, "rev-parse", "HEAD")

    code, err = _commit(checkout, RETRY, RETRY_PY.replace("2**attempt", "3**attempt"), bob)

    assert code != 0
    assert f"{RETRY} is held by claim {alice} (alice)" in err
    assert git(checkout, "rev-parse", "HEAD") == before


def test_a_go_symbol_claim_is_refused_a_change_outside_its_symbol(checkout: Path) -> None:
    carol = _claim(checkout, "carol", f"{STORE}::Store.Put")
    code, err = _commit(checkout, STORE, STORE_GO.replace('"not found"', '"missing"'), carol)
    assert code != 0
    assert "commit refused" in err
    code, err = _commit(
        checkout, STORE, STORE_GO.replace("s.values[key] = value", "s.values[key] = value + ''"),
        carol,
    )  # fmt: skip
    assert code == 0, err
