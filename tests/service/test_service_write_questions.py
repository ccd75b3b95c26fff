"""``claim check`` answers on symbols and modules the way the ``pre-commit`` guard judges.

A claim holding only symbols (or only a module) asks about its own file, or about one
``path::Symbol``: the answer is the one rule (:func:`detente.domain.authority.check_targets`)
on real Python, TypeScript and Go sources.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.domain.claims.model import ClaimStatus
from detente.errors import OutOfScope, OverlapBlocking, ValidationError
from detente.service import Service
from gates_support import commit, git, hermetic, make_service

from source_repo import FILES, RETRY_PY
from support import seed

RETRY = "src/settlement/retry.py"
CLIENT = "web/src/client.ts"
STORE = "internal/storage/store.go"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    hermetic(tmp_path, monkeypatch)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root, commit(root, FILES, ref="refs/heads/main")


def _open(service: Service, base: str, agent: str, *paths: str, **targets: tuple[str, ...]) -> str:
    opened = seed(*paths, agent=agent, **targets)  # type: ignore[arg-type]
    claim = service.claims.open_claim(replace(opened, base_commit=base))
    assert claim.claim.status is ClaimStatus.ACTIVE
    return claim.claim.id


def test_a_symbol_claim_may_write_its_file_limited_to_its_symbols(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    bob = _open(service, m0, "bob", symbols=("RetryPolicy.give_up",))
    answer = service.claims.check_targets(bob, [RETRY])
    assert answer.targets == [RETRY]
    assert answer.limits == {RETRY: (f"{RETRY}::RetryPolicy.give_up",)}
    # Asked about the symbol itself, the answer is on the symbol: no limit to report.
    symbol = f"{RETRY}::RetryPolicy.give_up"
    assert service.claims.check_targets(bob, [symbol]).limits == {}
    assert service.claims.check_write(bob, [symbol]) == [symbol]


def test_a_symbol_question_is_judged_on_that_symbol_against_every_holder(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    alice = _open(service, m0, "alice", symbols=("RetryPolicy.backoff",))
    bob = _open(service, m0, "bob", symbols=("RetryPolicy.give_up",))
    # Beside alice's method, bob's file write is his own method only: not refused.
    assert service.claims.check_targets(bob, [RETRY]).limits == {
        RETRY: (f"{RETRY}::RetryPolicy.give_up",)
    }
    with pytest.raises(OverlapBlocking) as caught:
        service.claims.check_write(bob, [f"{RETRY}::RetryPolicy"])  # the class holds hers
    assert caught.value.extra["blockers"] == [
        {"path": f"{RETRY}::RetryPolicy", "claimId": alice, "agent": "alice"}
    ]
    with pytest.raises(OutOfScope) as outside:
        service.claims.check_write(bob, [f"{RETRY}::default_policy"])
    assert outside.value.extra["paths"] == [f"{RETRY}::default_policy"]


def test_typescript_methods_of_one_class_are_separate_write_targets(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    alice = _open(service, m0, "alice", symbols=(f"{CLIENT}::ApiClient.fetchClaims",))
    bob = _open(service, m0, "bob", symbols=(f"{CLIENT}::ApiClient.close",))
    assert service.claims.check_write(bob, [f"{CLIENT}::ApiClient.close"]) == [
        f"{CLIENT}::ApiClient.close"
    ]
    with pytest.raises(OverlapBlocking) as caught:
        service.claims.check_write(bob, [f"{CLIENT}::ApiClient.fetchClaims"])
    assert [b["claimId"] for b in caught.value.extra["blockers"]] == [alice]
    with pytest.raises(OutOfScope):
        service.claims.check_write(bob, [f"{CLIENT}::makeClient"])


def test_a_module_claim_covers_its_files_and_their_symbols(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    alice = _open(service, m0, "alice", modules=("internal/storage",))
    answer = service.claims.check_targets(alice, [STORE, f"{STORE}::Store.Get"])
    assert answer.targets == [STORE, f"{STORE}::Store.Get"]
    assert answer.limits == {}
    bob = _open(service, m0, "bob", "web/**")
    with pytest.raises(OverlapBlocking) as caught:
        service.claims.check_write(bob, [f"{STORE}::New"])
    assert caught.value.extra["blockers"] == [
        {"path": f"{STORE}::New", "claimId": alice, "agent": "alice"}
    ]


def test_a_question_with_a_worktree_change_is_answered_as_the_pre_commit_guard_judges(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    tree = tmp_path / "bob-tree"
    git(root, "worktree", "add", "-q", "--detach", str(tree), m0)
    service = make_service(root, tmp_path / "d.db")
    bob = service.claims.open_claim(
        replace(
            seed(agent="bob", symbols=("RetryPolicy.give_up",), worktree=str(tree)),
            base_commit=m0,
        )
    ).claim.id
    # Nothing changed yet: the guard has nothing to refuse, the check says "limited".
    assert service.claims.check_targets(bob, [RETRY]).limits
    (tree / RETRY).write_text(RETRY_PY.replace("attempt > 8", "attempt > 3"))
    assert service.claims.check_targets(bob, [RETRY]).limits == {}
    assert service.gates.check_commit("demo", bob, [RETRY]).ok
    (tree / RETRY).write_text(RETRY_PY.replace("(0.1, 30.0)", "(0.2, 30.0)"))
    with pytest.raises(OutOfScope) as caught:
        service.claims.check_write(bob, [RETRY])
    assert f"{RETRY}::default_policy outside the claim's symbols" in str(caught.value)
    assert not service.gates.check_commit("demo", bob, [RETRY]).ok
    # The symbol question stays about the symbol, whatever else the worktree changed.
    assert service.claims.check_write(bob, [f"{RETRY}::RetryPolicy.give_up"])


def test_a_whole_file_holder_refuses_a_question_on_one_of_its_symbols(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    alice = _open(service, m0, "alice", CLIENT)
    bob = _open(service, m0, "bob", "web/src/session.ts")
    with pytest.raises(OverlapBlocking) as caught:
        service.claims.check_write(bob, [f"{CLIENT}::makeClient"])
    assert [b["claimId"] for b in caught.value.extra["blockers"]] == [alice]


def test_a_target_naming_no_symbol_after_the_separator_is_a_validation_error(
    tmp_path: Path, repo: tuple[Path, str]
) -> None:
    root, m0 = repo
    service = make_service(root, tmp_path / "d.db")
    bob = _open(service, m0, "bob", symbols=("RetryPolicy.give_up",))
    with pytest.raises(ValidationError) as caught:
        service.claims.check_write(bob, [f"{RETRY}::"])
    assert caught.value.extra.get("field") == "paths[0]"
