"""A detente hook in a repository detente does not coordinate checks nothing and creates
nothing; the guard's imports stay small.

A hooks directory shared by many repositories (``git config --global core.hooksPath``)
runs detente's hooks in repositories that have no store and no server: there a commit or
a ref update goes through, and no ``.git/detente`` appears. Real repositories, real
``git commit`` and ``git update-ref``; the hooks are the installed scripts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hooks_harness import Server, Shared, detente, git, run_git

from detente.vcs.hook_scripts import SERVER_HOOKS, hook_script, install_local

#: Packages the pre-commit guard never needs (the CLI's, the HTTP server's, the edge's).
HEAVY = (
    "rich",
    "typer",
    "click",
    "fastapi",
    "starlette",
    "uvicorn",
    "pydantic",
    "httpx",
    "dulwich",
)


def _repository(path: Path) -> Path:
    git(path.parent, "init", "-q", "-b", "main", str(path))
    (path / "a.py").write_text("a = 1\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def test_a_commit_in_a_repository_without_a_store_succeeds_and_creates_nothing(
    tmp_path: Path,
) -> None:
    repo = _repository(tmp_path / "plain")
    install_local(repo)
    (repo / "a.py").write_text("a = 2\n")

    done = run_git(repo, "commit", "-q", "-am", "change")

    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert not (repo / ".git" / "detente").exists()


def test_server_side_hooks_let_updates_through_where_detente_is_not_configured(
    tmp_path: Path,
) -> None:
    repo = _repository(tmp_path / "plain")
    hooks = repo / ".git" / "hooks"
    for hook in SERVER_HOOKS:
        (hooks / hook).write_text(hook_script(hook))
        (hooks / hook).chmod(0o755)
    (repo / "a.py").write_text("a = 2\n")

    done = run_git(repo, "commit", "-q", "-am", "change")  # moves main: a ref transaction

    assert done.returncode == 0, done.stderr
    assert not (repo / ".git" / "detente").exists()


def _modules_after_hook(cwd: Path, env: dict[str, str]) -> tuple[int, list[str], str]:
    """Run the pre-commit entry in a fresh interpreter; (exit status, heavy packages
    imported, stderr)."""
    script = (
        "import json, sys\n"
        "from detente.hooks.__main__ import main\n"
        "code = main(['pre-commit'])\n"
        f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(json.dumps([code, heavy]))\n"
    )
    import os

    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=True,
    )
    code, heavy = json.loads(done.stdout)
    return code, heavy, done.stderr


@pytest.fixture
def claimed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str]:
    """A repository with alice's claim on a.py and bob's on b.py (local store), b.py
    staged; (repository, alice's claim, bob's claim)."""
    repo = _repository(tmp_path / "claimed")
    (repo / "b.py").write_text("b = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "b")
    monkeypatch.setenv("DETENTE_LOCAL", "1")
    ids = [
        str(
            detente(
                "--repo",
                str(repo),
                "claim",
                "open",
                "-o",
                o,
                "-p",
                p,
                "--agent",
                a,
                "--no-worktree",
            )["claim"]["id"]
        )
        for o, p, a in (("A", "a.py", "alice"), ("B", "b.py", "bob"))
    ]
    monkeypatch.delenv("DETENTE_LOCAL")
    (repo / "b.py").write_text("b = 2\n")
    git(repo, "add", "b.py")
    return repo, ids[0], ids[1]


def test_the_guard_in_local_mode_imports_no_cli_server_or_edge_packages(
    claimed: tuple[Path, str, str],
) -> None:
    repo, _, bob = claimed

    code, heavy, err = _modules_after_hook(repo, {"DETENTE_LOCAL": "1", "DETENTE_CLAIM": bob})

    assert code == 0, err
    assert heavy == []


def test_the_guard_in_local_mode_still_refuses_another_claims_file(
    claimed: tuple[Path, str, str],
) -> None:
    repo, alice, bob = claimed
    (repo / "a.py").write_text("a = 3\n")
    git(repo, "add", "a.py")

    code, heavy, err = _modules_after_hook(repo, {"DETENTE_LOCAL": "1", "DETENTE_CLAIM": bob})

    assert code == 1
    assert f"a.py is held by claim {alice} (alice)" in err
    assert heavy == []


def test_the_guard_in_server_mode_imports_no_cli_server_or_edge_packages(
    shared: Shared, server: Server
) -> None:
    (shared.work / "a.py").write_text("a = 2\n")
    git(shared.work, "add", "a.py")

    code, heavy, err = _modules_after_hook(shared.work, {"DETENTE_URL": server.url})

    assert "detente:" in err or code == 0  # the server answered (or refused) the check
    assert heavy == []
