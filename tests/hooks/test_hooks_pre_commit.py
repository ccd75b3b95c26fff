"""The pre-commit guard reads the index git is committing, whatever the commit form.

``git commit -a``, ``git commit -- <paths>`` and ``git commit -i <paths>`` commit a
temporary index named by ``GIT_INDEX_FILE``; a guard that reads the real index instead
lets another claim's file through. Real repository, real ``git commit``, local mode.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hooks_harness import detente, git, run_git

FORMS = {
    "add-then-commit": ["commit", "-q", "-m", "x"],
    "commit -a": ["commit", "-q", "-a", "-m", "x"],
    "commit -- path": ["commit", "-q", "-m", "x", "--", "{path}"],
    "commit -i path": ["commit", "-q", "-m", "x", "-i", "{path}"],
    "commit --only path": ["commit", "-q", "-m", "x", "--only", "{path}"],
}


@pytest.fixture
def claimed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str]:
    """A repository where alice claims ``src/a.py`` and bob ``src/b.py``, with the guard
    installed; (checkout, alice's claim, bob's claim)."""
    checkout = tmp_path / "checkout"
    (checkout / "src").mkdir(parents=True)
    git(checkout, "init", "-q", "-b", "main")
    for rel in ("src/a.py", "src/b.py"):
        (checkout / rel).write_text(f"{rel} v1\n")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "initial")
    monkeypatch.setenv("DETENTE_LOCAL", "1")
    repo = ["--repo", str(checkout)]
    opened = [
        detente(*repo, "claim", "open", "-o", o, "-p", p, "--agent", a, "--no-worktree")
        for o, p, a in (("A", "src/a.py", "alice"), ("B", "src/b.py", "bob"))
    ]
    detente(*repo, "hooks", "install")
    return checkout, str(opened[0]["claim"]["id"]), str(opened[1]["claim"]["id"])


def _commit(checkout: Path, form: str, path: str, bob: str) -> tuple[int, str]:
    (checkout / path).write_text(f"bob's change to {path}\n")
    if form == "add-then-commit":
        git(checkout, "add", path)
    args = [a.replace("{path}", path) for a in FORMS[form]]
    done = run_git(checkout, *args, env={"DETENTE_CLAIM": bob})
    return done.returncode, done.stderr


@pytest.mark.parametrize("form", list(FORMS))
def test_every_commit_form_is_refused_when_it_takes_another_claims_file(
    claimed: tuple[Path, str, str], form: str
) -> None:
    checkout, alice, bob = claimed
    before = git(checkout, "rev-parse", "HEAD")

    code, err = _commit(checkout, form, "src/a.py", bob)

    assert code != 0
    assert f"src/a.py is held by claim {alice} (alice)" in err
    assert "commit refused" in err
    assert git(checkout, "rev-parse", "HEAD") == before
    assert (checkout / "src/a.py").read_text() == "bob's change to src/a.py\n"  # kept


@pytest.mark.parametrize("form", list(FORMS))
def test_every_commit_form_commits_the_claims_own_file(
    claimed: tuple[Path, str, str], form: str
) -> None:
    checkout, _, bob = claimed

    code, err = _commit(checkout, form, "src/b.py", bob)

    assert code == 0, err
    assert git(checkout, "show", "--name-only", "--format=", "HEAD") == "src/b.py"


def test_a_commit_run_with_an_explicit_git_dir_and_work_tree_is_checked_too(
    claimed: tuple[Path, str, str], tmp_path: Path
) -> None:
    checkout, alice, bob = claimed
    (checkout / "src/a.py").write_text("bob again\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    locate = [f"--git-dir={checkout / '.git'}", f"--work-tree={checkout}"]

    done = run_git(elsewhere, *locate, "commit", "-q", "-am", "x", env={"DETENTE_CLAIM": bob})

    assert done.returncode != 0
    assert f"src/a.py is held by claim {alice} (alice)" in done.stderr


def test_a_claims_commit_of_a_registered_memory_document_is_refused_naming_memory_patch(
    claimed: tuple[Path, str, str],
) -> None:
    checkout, _, bob = claimed
    (checkout / "AGENTS.md").write_text("# Agents\n\n## Build\n\nmake\n")
    git(checkout, "add", "AGENTS.md")
    git(checkout, "commit", "-q", "-m", "agents", "--no-verify")
    detente("--repo", str(checkout), "memory", "register", "AGENTS.md", "--class", "section_owned")
    before = git(checkout, "rev-parse", "HEAD")

    code, err = _commit(checkout, "commit -a", "AGENTS.md", bob)
    person = run_git(checkout, "commit", "-q", "-a", "-m", "a person's edit")

    assert code != 0 and "commit refused" in err
    assert "AGENTS.md is a registered memory document (section_owned)" in err
    assert "detente memory patch 'AGENTS.md#<section>'" in err
    assert person.returncode == 0, person.stderr  # no claim: a person's commit goes through
    assert git(checkout, "rev-parse", "HEAD^") == before
