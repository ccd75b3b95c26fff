"""Diff to symbols and reconcile_diff_intent on a real repository with real worktrees."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.errors import ValidationError
from detente.service import RepoConfig, Service
from detente.service.reconcile import IntentSpec
from detente.storage.memory import MemoryStore

from source_repo import git, make_source_repo
from support import counting_ids, seed


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.head = make_source_repo(root)
        self.service = Service(
            MemoryStore(), FakeClock(), [RepoConfig("demo", path=root)], ids=counting_ids()
        )

    def worktree(self, name: str) -> Path:
        tree = self.root.parent / name
        git(self.root, "worktree", "add", "-q", "-b", name, str(tree), self.head)
        return tree

    def claim(self, name: str, *paths: str, **kw: object) -> str:
        tree = self.worktree(name)
        cmd = seed(*paths, agent=name, branch=name, worktree=str(tree), **kw)
        return self.service.claims.open_claim(replace(cmd, base_commit=self.head)).claim.id


def edit(tree: Path, path: str, old: str, new: str) -> None:
    file = tree / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


def test_worktree_edits_map_to_the_innermost_symbols_in_python_typescript_and_go(
    repo: Repo,
) -> None:
    claim = repo.claim("alice", "web/**", "internal/**", "src/**")
    tree = repo.root.parent / "alice"
    edit(tree, "web/src/client.ts", "const session =", "const s2 = 1;\n    const session =")
    edit(tree, "internal/storage/store.go", "s.values[key] = value", 's.values[key] = value + ""')
    edit(tree, "src/settlement/retry.py", "return attempt > 8", "return attempt > 9")
    (tree / "src/settlement/fees.py").write_text("def fee() -> int:\n    return 1\n")
    touched = repo.service.reconcile.claim_touches(claim)
    assert touched["symbols"] == [
        "internal/storage/store.go::Store.Put",
        "src/settlement/fees.py::fee",
        "src/settlement/retry.py::RetryPolicy.give_up",
        "web/src/client.ts::ApiClient.fetchClaims",
    ]
    assert touched["outsideScope"] == []


def test_a_symbol_scoped_claim_sees_edits_outside_its_symbols_flagged(repo: Repo) -> None:
    claim = repo.claim("bob", symbols=("Ledger.post",))
    tree = repo.root.parent / "bob"
    edit(tree, "src/settlement/ledger.py", "raise RuntimeError(entry)", "raise ValueError(entry)")
    edit(tree, "src/settlement/retry.py", "return attempt > 8", "return attempt > 3")
    touched = repo.service.reconcile.claim_touches(claim)
    assert touched["symbols"] == [
        "src/settlement/ledger.py::Ledger.post",
        "src/settlement/retry.py::RetryPolicy.give_up",
    ]
    assert touched["outsideScope"] == ["src/settlement/retry.py::RetryPolicy.give_up"]


def test_committed_branch_work_is_diffed_when_the_worktree_is_gone(repo: Repo) -> None:
    claim = repo.claim("carol", "internal/**")
    tree = repo.root.parent / "carol"
    edit(tree, "internal/storage/store.go", "return &Store{", "return &Store{ // new\n\t\t")
    git(tree, "commit", "-qam", "touch New")
    git(repo.root, "worktree", "remove", "--force", str(tree))
    touched = repo.service.reconcile.claim_touches(claim)
    assert touched["symbols"] == ["internal/storage/store.go::New"]
    assert touched["worktree"] is None and touched["head"]


def test_two_actual_diffs_that_change_one_method_share_it(repo: Repo) -> None:
    a = repo.claim("alice", "src/settlement/retry.py")
    b = repo.claim("bob", "src/settlement/ledger.py")
    edit(repo.root.parent / "alice", "src/settlement/retry.py", "attempt > 8", "attempt > 5")
    edit(repo.root.parent / "bob", "src/settlement/retry.py", "attempt > 8", "attempt >= 8")
    result = repo.service.reconcile.reconcile_intents(
        "demo", IntentSpec(claim_id=a, actual=True), IntentSpec(claim_id=b, actual=True)
    )
    assert result["overlap"] is True
    assert [s["target"] for s in result["shared"]] == [
        "src/settlement/retry.py::RetryPolicy.give_up"
    ]


def test_disjoint_edits_that_call_each_other_are_reported_as_interactions(repo: Repo) -> None:
    a = repo.claim("alice", "src/settlement/retry.py")
    b = repo.claim("bob", "src/settlement/ledger.py")
    edit(repo.root.parent / "alice", "src/settlement/retry.py", "attempt > 8", "attempt > 5")
    edit(repo.root.parent / "bob", "src/settlement/ledger.py", "range(3)", "range(4)")
    result = repo.service.reconcile.reconcile_intents(
        "demo", IntentSpec(claim_id=a, actual=True), IntentSpec(claim_id=b, actual=True)
    )
    assert result["overlap"] is False
    assert [(i["symbol"], i["within"]) for i in result["interactions"]] == [
        ("src/settlement/retry.py::RetryPolicy.give_up", "src/settlement/ledger.py::Ledger.post")
    ]
    assert "interface" in result["next"]


def test_explicit_intents_meet_on_a_class_and_its_file(repo: Repo) -> None:
    result = repo.service.reconcile.reconcile_intents(
        "demo",
        IntentSpec(symbols=("RetryPolicy",), rough_change_kind="rename"),
        IntentSpec(paths=("src/settlement/retry.py",)),
    )
    [shared] = result["shared"]
    assert shared == {
        "target": "src/settlement/retry.py::RetryPolicy",
        "kind": "symbol",
        "a": "src/settlement/retry.py::RetryPolicy",
        "b": "src/settlement/retry.py",
    }
    refs = result["blastRadius"]["references"]
    assert ("src/settlement/ledger.py", 8, "src/settlement/ledger.py::Ledger.__init__") in {
        (r["path"], r["line"], r["within"]) for r in refs
    }
    # Special names such as __init__ are everywhere: never followed by name.
    assert all(not r["symbol"].endswith("__init__") for r in refs)


def test_the_blast_radius_is_bounded_and_says_so(repo: Repo) -> None:
    result = repo.service.reconcile.reconcile_intents(
        "demo",
        IntentSpec(symbols=("RetryPolicy",)),
        IntentSpec(symbols=("Session",)),
        depth=1,
        limit=1,
    )
    radius = result["blastRadius"]
    assert len(radius["references"]) == 1
    assert radius["truncated"] is True
    assert "more than 1 references" in radius["truncation"]


def test_an_intent_naming_nothing_or_bad_bounds_is_a_validation_error(repo: Repo) -> None:
    with pytest.raises(ValidationError, match="names nothing"):
        repo.service.reconcile.reconcile_intents("demo", IntentSpec(), IntentSpec(paths=("x.py",)))
    with pytest.raises(ValidationError, match="depth"):
        repo.service.reconcile.reconcile_intents(
            "demo", IntentSpec(paths=("x.py",)), IntentSpec(paths=("x.py",)), depth=9
        )


def test_too_many_glob_file_pairs_are_refused_before_any_matching(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from detente.service import reconcile

    files = len(git(repo.root, "ls-files").splitlines())
    monkeypatch.setattr(reconcile, "MAX_PATTERN_FILE_PAIRS", files * 2)  # two such globs
    many = IntentSpec(paths=tuple(f"*/**/*x{i}*" for i in range(3)))
    with pytest.raises(ValidationError, match="narrower patterns") as refused:
        repo.service.reconcile.reconcile_intents("demo", many, IntentSpec(paths=("x.py",)))
    assert refused.value.extra["field"] == "a.paths"
    # Literal paths cost nothing: a thousand of them pass.
    literal = IntentSpec(paths=tuple(f"new/file{i}.py" for i in range(1000)))
    answer = repo.service.reconcile.reconcile_intents("demo", literal, literal)
    assert answer["overlap"] is True
