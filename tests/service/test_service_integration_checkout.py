"""Integration never corrupts a checkout of the target branch (issue #12, input 5).

The rule of ``git push`` to a checked-out branch with
``receive.denyCurrentBranch=updateInstead``: a clean worktree with the branch checked out
is updated with it; one with any staged or unstaged change (anywhere, not only in the
paths that move) or an untracked file in the way refuses it, naming the worktree and
those paths, and nothing moves. Registered memory documents (detente writes them into
the checkout) do not make it dirty unless the integration changes them too. Real
repositories, real git.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.domain.claims.model import ClaimStatus, MemoryImpact
from detente.domain.memory import commands as mc
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


def test_an_edit_of_a_file_the_integration_leaves_alone_still_refuses_and_nothing_moves(
    checkout: tuple[Path, str], tmp_path: Path
) -> None:
    path, m0 = checkout
    (path / "b.py").write_text("b = 'mine'\n")
    git(path, "add", "b.py")
    (path / "notes.txt").write_text("untracked and out of the way\n")
    service = make_service(path, tmp_path / "d.db")
    claim = service.claims.open_claim(replace(seed("a.py"), base_commit=m0)).claim
    head = commit(path, {"a.py": "a = 2\n", "b.py": "b = 1\n"}, parent=m0, when=10)

    with pytest.raises(BranchInUse) as refused:
        service.gates.complete(claim.id, completion(claim, head, m0, ("a.py",)))

    assert refused.value.code == "branch_in_use"
    assert refused.value.extra["worktree"] == str(path)
    assert refused.value.extra["dirtyPaths"] == ["b.py"]  # staged, though a.py is what moves
    assert git(path, "rev-parse", "refs/heads/main") == m0
    assert git(path, "status", "--porcelain") == "M  b.py\n?? notes.txt"
    assert (path / "a.py").read_text() == "a = 1\n"
    assert service.claims.get_claim(claim.id).claim.status is ClaimStatus.ACTIVE


def test_an_unstaged_edit_and_a_deletion_are_both_named(
    checkout: tuple[Path, str], tmp_path: Path
) -> None:
    path, m0 = checkout
    (path / "b.py").write_text("b = 'mine'\n")
    (path / "a.py").unlink()
    service = make_service(path, tmp_path / "d.db")
    claim = service.claims.open_claim(replace(seed("a.py"), base_commit=m0)).claim
    head = commit(path, {"a.py": "a = 2\n", "b.py": "b = 1\n"}, parent=m0, when=10)

    with pytest.raises(BranchInUse) as refused:
        service.gates.complete(claim.id, completion(claim, head, m0, ("a.py",)))

    assert refused.value.extra["dirtyPaths"] == ["a.py", "b.py"]
    assert "a.py, b.py" in refused.value.detail
    assert git(path, "rev-parse", "refs/heads/main") == m0


def test_a_memory_write_is_a_commit_on_main_that_leaves_the_checkout_clean(
    checkout: tuple[Path, str], tmp_path: Path
) -> None:
    path, m0 = _with_memory_file(*checkout)
    service = make_service(path, tmp_path / "d.db")
    _patch_build_section(service, "Run make.")
    m1 = git(path, "rev-parse", "refs/heads/main")
    assert m1 != m0 and git(path, "rev-parse", f"{m1}^") == m0
    assert "Detente-Memory: AGENTS.md r2" in git(path, "log", "-1", "--format=%B", m1)
    assert git(path, "status", "--porcelain") == ""

    _, head = _complete(service, path, m1)  # a claim on the tip after the memory write

    assert git(path, "rev-parse", "refs/heads/main") == head
    assert (path / "a.py").read_text() == "a = 2\n"
    assert "Run make." in (path / "AGENTS.md").read_text()
    assert git(path, "status", "--porcelain") == ""


def _with_memory_file(path: Path, base: str) -> tuple[Path, str]:
    """``AGENTS.md`` (a ``## Build`` section) committed on ``main``; the new tip."""
    (path / "AGENTS.md").write_text("# Agents\n\n## Build\n\nTBD.\n")
    git(path, "add", "AGENTS.md")
    git(path, "commit", "-q", "-m", "memory")
    return path, git(path, "rev-parse", "HEAD")


def _patch_build_section(service: Service, text: str) -> None:
    """A claim writes ``AGENTS.md#build`` in the repository's own working tree."""
    doc = service.memory.register_document(mc.Register("demo", "AGENTS.md", "section_owned"))
    impact = MemoryImpact("AGENTS.md", sections=("build",))
    writer = service.claims.open_claim(seed(agent="docs", memory_impacts=(impact,))).claim
    service.memory.patch_section(
        mc.PatchSection(
            "demo",
            "AGENTS.md",
            "build",
            expected_section_revision=doc.section("build")["revision"],
            expected_file_hash=str(doc.document.file_hash),
            claim_id=writer.id,
            fencing_token=writer.fencing_token,
            body=f"\n{text}\n",
        )
    )


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
