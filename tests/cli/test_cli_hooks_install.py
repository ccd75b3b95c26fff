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
