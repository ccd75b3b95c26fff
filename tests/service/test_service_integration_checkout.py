"""Integration never corrupts a checkout of the target branch (issue #12, input 5).

The rule of ``git push`` to a checked-out branch with
``receive.denyCurrentBranch=updateInstead``, narrowed to the paths that move: a worktree
with the branch checked out is updated with it (other local changes kept); one that
changed a path the integration changes refuses it, naming the worktree and those
paths, and nothing moves. Real repositories, real git.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.domain.claims.model import ClaimStatus
from detente.errors import BranchInUse
from detente.service import Service
from gates_support import commit, completion, git, hermetic, make_service

from support import seed


@pytest.fixture(autouse=True)
def _hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic(tmp_path, monkeypatch)


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, str]:
    """A repository with ``main`` checked out in its own working tree."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("a = 1\n")
    (root / "b.py").write_text("b = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root, git(root, "rev-parse", "HEAD")


def _complete(service: Service, path: Path, base: str) -> tuple[str, str]:
    claim = service.claims.open_claim(replace(seed("a.py"), base_commit=base)).claim
    head = commit(path, {"a.py": "a = 2\n", "b.py": "b = 1\n"}, parent=base, when=10)
    cmd = completion(claim, head, base, ("a.py",))
    service.gates.complete(claim.id, cmd)
    return claim.id, head


def test_a_clean_checkout_of_main_is_updated_with_the_integration(
    checkout: tuple[Path, str], tmp_path: Path
) -> None:
    path, m0 = checkout
    service = make_service(path, tmp_path / "d.db")
    claim_id, head = _complete(service, path, m0)

    assert git(path, "rev-parse", "refs/heads/main") == head
    assert (path / "a.py").read_text() == "a = 2\n"
    assert git(path, "status", "--porcelain") == ""
    assert service.claims.get_claim(claim_id).claim.status is ClaimStatus.COMPLETED


def test_a_checkout_with_the_integrated_file_edited_refuses_naming_the_worktree_and_paths(
    checkout: tuple[Path, str], tmp_path: Path
) -> None:
    path, m0 = checkout
    (path / "a.py").write_text("a = 'mine'\n")
    service = make_service(path, tmp_path / "d.db")
    claim = service.claims.open_claim(replace(seed("a.py"), base_commit=m0)).claim
    head = commit(path, {"a.py": "a = 2\n", "b.py": "b = 1\n"}, parent=m0, when=10)

    with pytest.raises(BranchInUse) as refused:
        service.gates.complete(claim.id, completion(claim, head, m0, ("a.py",)))

    assert refused.value.extra["worktree"] == str(path)
    assert refused.value.extra["dirtyPaths"] == ["a.py"]
    assert git(path, "rev-parse", "refs/heads/main") == m0
    assert (path / "a.py").read_text() == "a = 'mine'\n"
    assert service.claims.get_claim(claim.id).claim.status is ClaimStatus.ACTIVE


def test_an_unrelated_local_edit_stays_while_the_checkout_is_updated(
    checkout: tuple[Path, str], tmp_path: Path
) -> None:
    path, m0 = checkout
    (path / "b.py").write_text("b = 'mine'\n")
    git(path, "add", "b.py")
    service = make_service(path, tmp_path / "d.db")

    _complete(service, path, m0)

    assert (path / "a.py").read_text() == "a = 2\n"
    assert (path / "b.py").read_text() == "b = 'mine'\n"
    assert git(path, "status", "--porcelain") == "M  b.py"  # still staged, nothing reverted


def test_an_untracked_file_the_integration_would_overwrite_refuses_it(
    checkout: tuple[Path, str], tmp_path: Path
) -> None:
    path, m0 = checkout
    (path / "c.py").write_text("user's own c\n")
    service = make_service(path, tmp_path / "d.db")
    claim = service.claims.open_claim(replace(seed("c.py"), base_commit=m0)).claim
    head = commit(path, {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c\n"}, parent=m0)

    with pytest.raises(BranchInUse) as refused:
        service.gates.complete(claim.id, completion(claim, head, m0, ("c.py",)))

    assert refused.value.extra["dirtyPaths"] == ["c.py"]
    assert (path / "c.py").read_text() == "user's own c\n"


def test_a_linked_worktree_with_main_checked_out_is_updated_too(
    checkout: tuple[Path, str], tmp_path: Path
) -> None:
    path, m0 = checkout
    git(path, "switch", "-q", "-c", "dev")
    linked = tmp_path / "main-wt"
    git(path, "worktree", "add", "-q", str(linked), "main")
    service = make_service(path, tmp_path / "d.db")

    _, head = _complete(service, path, m0)

    assert git(linked, "rev-parse", "HEAD") == head
    assert (linked / "a.py").read_text() == "a = 2\n"
    assert git(linked, "status", "--porcelain") == ""
    assert git(path, "rev-parse", "HEAD") == m0  # the dev checkout is left alone
