"""The post-commit hook merge-checks the committing claim's branch: a commit whose edit
git cannot merge with another live claim's opens a room before either completes, and
nothing ever stands in the commit's way. Real repository, real ``git commit`` running the
installed hooks, local mode (the repository's own SQLite store)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hooks_harness import detente, git, run_git

CALC = "def a():\n    return 1\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "checkout"
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.py").write_text(CALC)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    monkeypatch.setenv("DETENTE_LOCAL", "1")
    # The hook is a new interpreter started by git: it runs this checkout's detente.
    src = str(Path(__file__).resolve().parents[2] / "src")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    detente("--repo", str(root), "hooks", "install")
    return root


def _open(root: Path, agent: str, symbol: str) -> dict[str, str]:
    opened = detente(
        "--repo", str(root), "claim", "open", "-o", f"{agent} edits {symbol}",
        "--symbol", symbol, "--agent", agent,
    )  # fmt: skip
    claim: dict[str, str] = opened["claim"]
    return claim


def _edit(claim: dict[str, str], old: str, new: str) -> tuple[int, str]:
    tree = Path(claim["worktree"])
    path = tree / "src" / "calc.py"
    path.write_text(path.read_text().replace(old, new))
    done = run_git(tree, "commit", "-q", "-am", f"{claim['id']} edits calc")
    return done.returncode, done.stderr


def test_adjacent_edits_committed_by_two_claims_open_a_room_with_the_hunks(
    checkout: Path,
) -> None:
    alice = _open(checkout, "alice", "src/calc.py::a")
    bob = _open(checkout, "bob", "src/calc.py::b")

    first = _edit(alice, "return 1", "return 10")
    code, err = _edit(bob, "def b():", "def b(x=0):")

    assert first[0] == 0 and code == 0, err
    assert f"{bob['id']} would conflict with {alice['id']} in src/calc.py" in err
    [room] = detente("--repo", str(checkout), "meeting", "list")["meetings"]
    assert set(room["participants"]) == {alice["id"], bob["id"]}
    [witness] = room["mergeConflicts"]
    assert "def b(x=0):" in witness["hunks"][0]["text"]
    status = detente("--repo", str(checkout), "claim", "status", alice["id"])
    assert status["claim"]["status"] == "active"  # before either completes


def test_edits_that_merge_cleanly_open_no_room_and_say_nothing(checkout: Path) -> None:
    alice = _open(checkout, "alice", "src/calc.py::a")
    carol = _open(checkout, "carol", "src/calc.py::c")

    _edit(alice, "return 1", "return 10")
    code, err = _edit(carol, "return 3", "return 30")

    assert code == 0 and err == ""
    assert detente("--repo", str(checkout), "meeting", "list")["meetings"] == []
    checks = detente("--repo", str(checkout), "claim", "status", carol["id"])["checks"]
    assert alice["id"] in checks["mergeCheck"]["checked"]


def test_a_claim_working_without_a_branch_of_its_own_commits_silently(checkout: Path) -> None:
    opened = detente(
        "--repo", str(checkout), "claim", "open", "-o", "in place", "-p", "src/**",
        "--agent", "alice", "--no-worktree",
    )  # fmt: skip
    (checkout / "src" / "calc.py").write_text(CALC + "# more\n")

    done = run_git(
        checkout, "commit", "-q", "-am", "in place", env={"DETENTE_CLAIM": opened["claim"]["id"]}
    )

    assert done.returncode == 0 and done.stderr == ""
