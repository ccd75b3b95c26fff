"""Write authority respects other claims' symbols and modules by the overlap rule."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.domain.claims.model import ClaimStatus
from detente.errors import EvidenceRejected, OverlapBlocking
from gates_support import commit, completion, git, hermetic, make_service

from source_repo import LEDGER_PY, RETRY_PY, STORE_GO
from support import seed

RETRY = "src/settlement/retry.py"
LEDGER = "src/settlement/ledger.py"
STORE = "internal/storage/store.go"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    hermetic(tmp_path, monkeypatch)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    m0 = commit(root, {RETRY: RETRY_PY, LEDGER: LEDGER_PY, STORE: STORE_GO}, ref="refs/heads/main")
    return root, m0


def test_a_change_to_another_function_of_a_file_completes_beside_a_held_symbol(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    service.claims.open_claim(
        replace(seed(agent="alice", symbols=("RetryPolicy.backoff",)), base_commit=m0)
    )
    bob = service.claims.open_claim(
        replace(seed(agent="bob", symbols=("RetryPolicy.give_up",)), base_commit=m0)
    ).claim
    head = commit(root, {RETRY: RETRY_PY.replace("attempt > 8", "attempt > 3")}, parent=m0)
    done = service.gates.complete(bob.id, completion(bob, head, m0, (RETRY,)))
    assert done.claim.status is ClaimStatus.COMPLETED


def test_a_change_touching_a_symbol_another_claim_holds_is_refused_naming_the_holder(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    alice = service.claims.open_claim(
        replace(seed(agent="alice", symbols=("RetryPolicy.backoff",)), base_commit=m0)
    ).claim
    bob = service.claims.open_claim(
        replace(seed("src/settlement/ledger.py", agent="bob"), base_commit=m0)
    ).claim
    changed = RETRY_PY.replace("2**attempt", "3**attempt")
    head = commit(root, {RETRY: changed, LEDGER: LEDGER_PY + "\n"}, parent=m0)
    with pytest.raises(EvidenceRejected) as caught:
        service.gates.complete(bob.id, completion(bob, head, m0, (LEDGER, RETRY)))
    assert caught.value.failures == [f"{RETRY} is held by claim {alice.id} (alice)"]
    assert service.claims.get_claim(bob.id).claim.status is ClaimStatus.ACTIVE


def test_lines_outside_every_symbol_do_not_touch_a_held_symbol(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    service.claims.open_claim(
        replace(seed(agent="alice", symbols=("RetryPolicy.backoff",)), base_commit=m0)
    )
    bob = service.claims.open_claim(
        replace(seed(agent="bob", symbols=("default_policy",)), base_commit=m0)
    ).claim
    changed = RETRY_PY.replace("import random", "import random\nimport math")
    changed = changed.replace("RetryPolicy(0.1, 30.0)", "RetryPolicy(0.2, 30.0)")
    head = commit(root, {RETRY: changed}, parent=m0)
    with pytest.raises(EvidenceRejected) as caught:
        service.gates.complete(bob.id, completion(bob, head, m0, (RETRY,)))
    # The import line is bob's own stray edit (outside his symbols), never alice's method.
    [failure] = caught.value.failures
    assert "alice" not in failure
    assert failure.startswith(f"{RETRY} changes {RETRY} outside claim {bob.id}'s symbols")


def test_a_whole_file_write_is_refused_by_a_symbol_held_in_that_file(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    alice = service.claims.open_claim(
        replace(seed(agent="alice", symbols=("RetryPolicy.backoff",)), base_commit=m0)
    ).claim
    bob = service.claims.open_claim(replace(seed(LEDGER, agent="bob"), base_commit=m0)).claim
    with pytest.raises(OverlapBlocking) as caught:
        service.claims.check_write(bob.id, [RETRY, LEDGER])
    assert caught.value.extra["blockers"] == [
        {"path": RETRY, "claimId": alice.id, "agent": "alice"}
    ]
    assert service.claims.check_write(bob.id, [LEDGER]) == [LEDGER]


def test_a_module_claim_owns_its_files_and_refuses_them_to_others(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    alice = service.claims.open_claim(
        replace(seed(agent="alice", modules=("internal/storage",)), base_commit=m0)
    ).claim
    assert service.claims.check_write(alice.id, [STORE]) == [STORE]
    bob = service.claims.open_claim(replace(seed(LEDGER, agent="bob"), base_commit=m0)).claim
    assert bob.status is ClaimStatus.ACTIVE
    with pytest.raises(OverlapBlocking) as caught:
        service.claims.check_write(bob.id, [STORE])
    assert caught.value.extra["blockers"] == [
        {"path": STORE, "claimId": alice.id, "agent": "alice"}
    ]


def test_a_write_check_judges_symbols_on_what_the_claims_worktree_touches(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    git(root, "update-ref", "refs/heads/main", m0)
    tree = tmp_path / "bob-tree"
    git(root, "worktree", "add", "-q", "--detach", str(tree), m0)
    service = make_service(root, tmp_path / "d.db")
    alice = service.claims.open_claim(
        replace(seed(agent="alice", symbols=("RetryPolicy.backoff",)), base_commit=m0)
    ).claim
    bob = service.claims.open_claim(
        replace(
            seed(agent="bob", symbols=("RetryPolicy.give_up",), worktree=str(tree)),
            base_commit=m0,
        )
    ).claim
    (tree / RETRY).write_text(RETRY_PY.replace("attempt > 8", "attempt > 3"))
    assert service.claims.check_write(bob.id, [RETRY]) == [RETRY]
    assert service.gates.check_commit("demo", bob.id, [RETRY]).ok
    (tree / RETRY).write_text(RETRY_PY.replace("2**attempt", "3**attempt"))
    with pytest.raises(OverlapBlocking) as caught:
        service.claims.check_write(bob.id, [RETRY])
    assert caught.value.extra["blockers"] == [
        {"path": RETRY, "claimId": alice.id, "agent": "alice"}
    ]
    assert not service.gates.check_commit("demo", bob.id, [RETRY]).ok
