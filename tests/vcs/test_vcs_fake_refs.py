"""The fake ref store answers like git where detente depends on it.

One script runs on a real repository (:class:`~detente.vcs.refstore.GitRefStore`) and on
the fake; the answers must agree once OIDs are mapped by name. Then the fake's own
promises: deterministic OIDs, CAS, checkouts, generated patterns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from detente.errors import BranchInUse, StaleBase, ValidationError
from detente.vcs.fake_refs import FakeRefStore
from detente.vcs.refs import ZERO_OID
from detente.vcs.refstore import GitRefStore, RefStore
from gates_support import at, commit, git, hermetic

MAIN = "refs/heads/main"


@pytest.fixture(autouse=True)
def _identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic(tmp_path, monkeypatch)


Build = Callable[[Mapping[str, str | None], str | None, float], str]


def _script(build: Build) -> dict[str, str]:
    """m0 -- c1 -- c3 on main's line, c2 a sibling of c1; returns name -> OID."""
    m0 = build({"a.py": "a0\n", "b.py": "b0\n"}, None, 0)
    c1 = build({"a.py": "a1\n"}, m0, 10)
    c2 = build({"b.py": "b1\n"}, m0, 20)
    c3 = build({"c.txt": "c\n", "b.py": None}, c1, 30)
    return {"m0": m0, "c1": c1, "c2": c2, "c3": c3}


def _both(tmp_path: Path) -> list[tuple[RefStore, dict[str, str]]]:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")

    def real(files: Mapping[str, str | None], parent: str | None, when: float) -> str:
        return commit(root, files, parent=parent, when=when)

    fake = FakeRefStore()

    def fake_commit(files: Mapping[str, str | None], parent: str | None, when: float) -> str:
        return fake.commit(files, parent=parent, when=at(when))

    out: list[tuple[RefStore, dict[str, str]]] = []
    for store, build in ((GitRefStore(root), real), (fake, fake_commit)):
        names = _script(build)
        if isinstance(store, FakeRefStore):
            store.set_ref(MAIN, names["m0"])
        else:
            git(root, "update-ref", MAIN, names["m0"])
        out.append((store, names))
    return out


def test_commit_facts_ancestry_and_diffs_agree_with_git(tmp_path: Path) -> None:
    answers = []
    for store, n in _both(tmp_path):
        back = {oid: name for name, oid in n.items()}
        ahead = store.commit_facts(head=n["c3"], base=n["m0"], claim_base=n["c1"], branch="main")
        sideways = store.commit_facts(
            head=n["c2"][:10], base=n["c1"], claim_base=n["m0"], branch=None
        )
        missing = store.commit_facts(head="f" * 40, base=n["m0"], claim_base=n["m0"], branch=None)
        answers.append(
            (
                back[str(ahead.head_oid)],
                ahead.head_time,
                ahead.from_base,
                ahead.from_claim_base,
                ahead.diff,
                back[str(ahead.branch_head)],
                back[str(sideways.head_oid)],
                sideways.from_base,
                sideways.from_claim_base,
                sideways.diff,
                missing.head_oid,
                store.is_ancestor(n["m0"], n["c3"]),
                store.is_ancestor(n["c2"], n["c3"]),
                back[store.resolve_commit(n["c1"][:8])],
                back[store.resolve_commit("main")],
            )
        )
    real, fake = answers
    assert real == fake
    assert real[4] == ("a.py", "b.py", "c.txt") and real[2] and not real[7]


def test_compare_and_swap_agrees_with_git_update_ref(tmp_path: Path) -> None:
    outcomes = []
    for store, n in _both(tmp_path):
        back = {oid: name for name, oid in n.items()}
        store.cas_update_ref(MAIN, n["c1"], n["m0"], message="first")
        with pytest.raises(StaleBase) as lost:
            store.cas_update_ref(MAIN, n["c2"], n["m0"], message="second")
        store.cas_update_ref("refs/heads/new", n["c2"], ZERO_OID, message="create")
        with pytest.raises(StaleBase) as exists:
            store.cas_update_ref("refs/heads/new", n["c3"], ZERO_OID, message="again")
        with pytest.raises(ValidationError):
            store.resolve_commit("no-such-branch")
        outcomes.append(
            (
                lost.value.code,
                back[lost.value.extra["actual"]],
                back[exists.value.extra["actual"]],
                back[store.resolve_commit("refs/heads/new")],
                back[store.resolve_commit("main")],
            )
        )
    assert outcomes[0] == outcomes[1] == ("stale_base", "c1", "c2", "c2", "c1")


def test_the_same_script_builds_the_same_oids_every_time() -> None:
    first, second = FakeRefStore(), FakeRefStore()
    for store in (first, second):
        m0 = store.commit({"a.py": "a\n"}, parent=None, when=at(0), ref=MAIN)
        store.commit({"a.py": "b\n"}, parent=m0, when=at(1), ref=MAIN)
    assert first.refs == second.refs and len(str(first.read_ref(MAIN))) == 40


def test_a_dirty_checkout_refuses_the_move_unless_it_is_a_maintained_file_left_alone() -> None:
    store = FakeRefStore()
    m0 = store.commit({"a.py": "a\n", "AGENTS.md": "# A\n"}, parent=None, when=at(0), ref=MAIN)
    m1 = store.commit({"a.py": "b\n"}, parent=m0, when=at(1))
    checkout = store.check_out(MAIN)
    checkout.edits["AGENTS.md"] = "# A\nby detente\n"
    assert store.refuse_dirty_checkouts(MAIN, m0, m1, {"AGENTS.md"}) == [checkout.path]
    with pytest.raises(BranchInUse) as refused:
        store.refuse_dirty_checkouts(MAIN, m0, m1, set())
    assert refused.value.extra["dirtyPaths"] == ["AGENTS.md"]
    store.cas_update_ref(MAIN, m1, m0, message="move")
    store.update_checkouts([checkout.path], m0, m1)
    assert checkout.head == m1 and checkout.files(store.commits)["a.py"] == "b\n"


def test_generated_patterns_come_from_the_trees_gitattributes_and_detente_toml() -> None:
    store = FakeRefStore()
    oid = store.commit(
        {
            ".gitattributes": "*.pb.go linguist-generated\n",
            "detente.toml": '[generated]\npatterns = ["gen/**"]\n',
            "x.pb.go": "package x\n",
        },
        parent=None,
        when=at(0),
    )
    view = store.view(oid)
    assert view is not None
    assert view.is_generated("a/b/x.pb.go") and view.is_generated("gen/api.json")
    assert not view.is_generated("src/x.go")
    assert store.view("0" * 40) is None
