"""Completion evidence of a symbol-scoped claim is judged on the symbols its diff touches."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.domain.claims.model import ClaimStatus
from detente.errors import EvidenceRejected
from gates_support import commit, completion, git, hermetic, make_service

from source_repo import LEDGER_PY, RETRY_PY
from support import seed

RETRY = "src/settlement/retry.py"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    hermetic(tmp_path, monkeypatch)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    m0 = commit(
        root, {RETRY: RETRY_PY, "src/settlement/ledger.py": LEDGER_PY}, ref="refs/heads/main"
    )
    return root, m0


def test_a_symbol_scoped_claim_completes_when_its_diff_stays_inside_its_symbols(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    claim = service.claims.open_claim(
        replace(seed(agent="alice", symbols=("RetryPolicy.give_up",)), base_commit=m0)
    ).claim
    head = commit(root, {RETRY: RETRY_PY.replace("attempt > 8", "attempt > 3")}, parent=m0)
    done = service.gates.complete(claim.id, completion(claim, head, m0, (RETRY,)))
    assert done.claim.status is ClaimStatus.COMPLETED


def test_edits_to_other_symbols_of_the_file_are_named_in_the_rejection(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    claim = service.claims.open_claim(
        replace(seed(agent="alice", symbols=("RetryPolicy.give_up",)), base_commit=m0)
    ).claim
    changed = RETRY_PY.replace("attempt > 8", "attempt > 3").replace("0.1, 30.0", "0.2, 30.0")
    head = commit(root, {RETRY: changed}, parent=m0)
    with pytest.raises(EvidenceRejected) as caught:
        service.gates.complete(claim.id, completion(claim, head, m0, (RETRY,)))
    assert caught.value.failures == [
        f"{RETRY} changes {RETRY}::default_policy outside claim {claim.id}'s symbols "
        f"({RETRY}::RetryPolicy.give_up)"
    ]
    assert service.claims.get_claim(claim.id).claim.status is ClaimStatus.ACTIVE
