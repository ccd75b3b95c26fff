"""What a claim's own work touches: after the rebase ``stale_base`` asks for, the
integrated work of other claims is not this claim's (one definition for ``symbols``,
``claim check`` and ``reconcile``), and a claim's worktree must be a worktree of its
repository. Real repository, real worktrees, real tree-sitter grammars."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.errors import ConflictError, ValidationError
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore

from source_repo import git, make_source_repo
from support import counting_ids, seed

#: Per language: the file, (mine: symbol, old, new), (theirs: symbol, old, new).
CASES = {
    "python": (
        "src/settlement/retry.py",
        ("RetryPolicy.backoff", "random.uniform(0, delay)", "random.uniform(0.0, delay)"),
        ("RetryPolicy.give_up", "return attempt > 8", "return attempt > 4"),
    ),
    "typescript": (
        "web/src/client.ts",
        ("ApiClient.close", "close(): void {}", "close(): void { return; }"),
        ("ApiClient.fetchClaims", "return session.get(", "return await session.get("),
    ),
    "go": (
        "internal/storage/store.go",
        ("Store.Put", "s.values[key] = value", 's.values[key] = value + ""'),
        ("Store.Get", "v, ok := s.values[key]", 'v, ok := s.values[key+""]'),
    ),
}


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.head = make_source_repo(root)
        self.service = Service(
            MemoryStore(), FakeClock(), [RepoConfig("demo", path=root)], ids=counting_ids()
        )

    def claim(self, name: str, symbol: str, *, tree: Path | None = None) -> str:
        if tree is None:
            tree = self.root.parent / name
            git(self.root, "worktree", "add", "-q", "-b", name, str(tree), self.head)
        cmd = seed(agent=name, branch=name, worktree=str(tree), symbols=(symbol,))
        return self.service.claims.open_claim(replace(cmd, base_commit=self.head)).claim.id


def edit(tree: Path, path: str, old: str, new: str) -> None:
    file = tree / path
    text = file.read_text()
    assert old in text, old
    file.write_text(text.replace(old, new))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


@pytest.mark.parametrize("language", list(CASES))
def test_after_rebasing_onto_anothers_integrated_method_a_claim_touches_only_its_own(
    repo: Repo, language: str
) -> None:
    rel, (mine, m_old, m_new), (theirs, t_old, t_new) = CASES[language]
    me = repo.claim("me", f"{rel}::{mine}")
    repo.claim("them", f"{rel}::{theirs}")
    tree = repo.root.parent / "me"
    edit(repo.root, rel, t_old, t_new)  # their work, integrated on main
    git(repo.root, "commit", "-q", "-am", "their method")
    edit(tree, rel, m_old, m_new)
    git(tree, "commit", "-q", "-am", "my method")
    git(tree, "rebase", "-q", "main")  # what stale_base asks for
    edit(tree, rel, m_new, m_new + " ")  # and the claim keeps working

    touched = repo.service.reconcile.claim_touches(me)

    assert touched["symbols"] == [f"{rel}::{mine}"]
    assert touched["outsideScope"] == []
    assert touched["base"] == git(repo.root, "rev-parse", "main")
    assert repo.service.claims.check_write(me, [rel]) == [rel]


def test_without_its_worktree_a_rebased_branch_is_diffed_from_the_merge_base(repo: Repo) -> None:
    rel, (mine, m_old, m_new), (_, t_old, t_new) = CASES["python"]
    me = repo.claim("me", f"{rel}::{mine}")
    tree = repo.root.parent / "me"
    edit(repo.root, rel, t_old, t_new)
    git(repo.root, "commit", "-q", "-am", "their method")
    edit(tree, rel, m_old, m_new)
    git(tree, "commit", "-q", "-am", "my method")
    git(tree, "rebase", "-q", "main")
    git(repo.root, "worktree", "remove", str(tree))

    touched = repo.service.reconcile.claim_touches(me)

    assert touched["worktree"] is None
    assert touched["symbols"] == [f"{rel}::{mine}"]
    assert touched["outsideScope"] == []


def test_an_unrebased_claim_still_owns_everything_it_changed_since_its_base(repo: Repo) -> None:
    rel, (mine, m_old, m_new), (theirs, t_old, t_new) = CASES["python"]
    me = repo.claim("me", f"{rel}::{mine}")
    tree = repo.root.parent / "me"
    edit(repo.root, rel, "return attempt > 8", "return attempt > 5")  # main moves on
    git(repo.root, "commit", "-q", "-am", "main moves")
    edit(tree, rel, m_old, m_new)
    edit(tree, rel, t_old, t_new)  # its own stray edit, not main's

    touched = repo.service.reconcile.claim_touches(me)

    assert touched["base"] == repo.head
    assert touched["outsideScope"] == [f"{rel}::{theirs}"]


def test_a_worktree_that_exists_and_is_not_one_of_the_repositorys_is_refused_at_open(
    repo: Repo, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    other = tmp_path / "other"
    make_source_repo(other)
    inside = repo.root / "src"
    for bad in (plain, other, inside):
        with pytest.raises(ValidationError) as caught:
            repo.claim(f"x{len(str(bad))}", "RetryPolicy.backoff", tree=bad)
        assert caught.value.field == "worktree"
        assert str(bad) in caught.value.detail
    assert repo.service.claims.list_claims() == []  # nothing opened


def test_a_worktree_still_to_create_is_accepted_and_the_main_checkout_refused(
    repo: Repo, tmp_path: Path
) -> None:
    later = repo.claim("later", "RetryPolicy.backoff", tree=tmp_path / "not-yet")
    with pytest.raises(ValidationError) as caught:
        repo.claim("mine", "Ledger.post", tree=repo.root)

    assert caught.value.field == "worktree"
    assert {c.id for c in repo.service.claims.list_claims()} == {later}


def test_reading_the_work_of_a_claim_whose_worktree_is_not_the_repositorys_is_a_409(
    repo: Repo, tmp_path: Path
) -> None:
    tree = tmp_path / "became-a-plain-directory"
    claim = repo.claim("me", "RetryPolicy.backoff", tree=tree)
    tree.mkdir()  # created after the open, but never as a worktree of this repository
    (tree / "notes.txt").write_text("not a checkout\n")

    with pytest.raises(ConflictError) as caught:
        repo.service.reconcile.claim_touches(claim)

    assert caught.value.code == "conflict"
    assert caught.value.extra["field"] == "worktree"
    assert str(tree) in caught.value.detail
