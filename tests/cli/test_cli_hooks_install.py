"""``hooks install --bare BARE``: the old ``--server BARE`` spelling is refused clearly."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_harness import Cli
from typer.testing import CliRunner

from detente.cli.main import app


def _bare(tmp_path: Path, repo: Path) -> Path:
    bare = tmp_path / "shared.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    return bare


def test_the_old_server_spelling_with_a_path_is_refused_naming_bare(
    repo: Path, tmp_path: Path
) -> None:
    bare = _bare(tmp_path, repo)
    code, problem = Cli(repo).json("hooks", "install", "--server", str(bare))
    assert code == 2 and problem["field"] == "server"
    assert "--bare" in problem["detail"] and str(bare) in problem["detail"]
    assert not (bare / "hooks" / "pre-receive").exists()
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()  # nothing installed


def test_a_global_server_that_is_a_path_is_refused_too(repo: Path, tmp_path: Path) -> None:
    bare = _bare(tmp_path, repo)
    result = CliRunner().invoke(
        app, ["--server", str(bare), "--repo", str(repo), "hooks", "install", "--json"]
    )
    assert result.exit_code == 2 and "--bare" in result.stdout
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()


def test_help_names_bare_and_not_the_old_spelling(repo: Path) -> None:
    text = Cli(repo)("hooks", "install", "--help").stdout
    assert "--bare" in text and "--server" not in text


def test_without_bare_the_local_guard_is_installed(repo: Path) -> None:
    code, body = Cli(repo).json("hooks", "install")
    assert code == 0, body
    assert any(p.endswith("pre-commit") for p in body["installed"])


def _shared_hooks(tmp_path: Path, repo: Path) -> Path:
    """``core.hooksPath`` of ``repo`` pointed at a directory outside it (as a global one)."""
    shared = tmp_path / "global-hooks"
    subprocess.run(["git", "config", "core.hooksPath", str(shared)], cwd=repo, check=True)
    return shared


def test_an_install_into_a_hooks_path_outside_the_repository_is_refused_writing_nothing(
    repo: Path, tmp_path: Path
) -> None:
    shared = _shared_hooks(tmp_path, repo)

    code, problem = Cli(repo).json("hooks", "install")

    assert code == 2 and problem["field"] == "hooksPath"
    assert str(shared) in problem["detail"] and "--repo-hooks" in problem["detail"]
    assert not shared.exists()
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()


def test_the_server_side_install_refuses_a_hooks_path_outside_the_repository_too(
    repo: Path, tmp_path: Path
) -> None:
    bare = _bare(tmp_path, repo)
    shared = _shared_hooks(tmp_path, bare)
    cli = Cli(repo)

    code, problem = cli.json(
        "--server", "http://127.0.0.1:9", "hooks", "install", "--bare", str(bare), "--name", "x"
    )

    assert code == 2 and problem["field"] == "hooksPath", problem
    assert not shared.exists() and not (bare / "hooks" / "pre-receive").exists()
    assert not (bare / "detente").exists()


def test_repo_hooks_installs_into_the_repositorys_own_directory_and_points_its_hooks_path_there(
    repo: Path, tmp_path: Path
) -> None:
    shared = _shared_hooks(tmp_path, repo)

    code, body = Cli(repo).json("hooks", "install", "--repo-hooks")

    own = (repo / ".git" / "hooks").resolve()
    assert code == 0, body
    assert body["installed"] == [str(own / "pre-commit"), str(own / "post-commit")]
    assert body["config"] == {"core.hooksPath": str(own)}
    assert not shared.exists()
    local = subprocess.run(
        ["git", "config", "--local", "core.hooksPath"], cwd=repo, capture_output=True, text=True
    )
    assert local.stdout.strip() == str(own)


def test_status_says_the_hooks_path_is_outside_the_repository_and_exits_1(
    repo: Path, tmp_path: Path
) -> None:
    shared = _shared_hooks(tmp_path, repo)

    code, body = Cli(repo).json("hooks", "status")

    assert code == 1
    assert body["hooksDir"] == str(shared) and body["hooksDirInside"] is False
