"""The repository-relative name of a file a hook payload names: every spelling that
reaches a file of this repository is named, in a real repository and a linked worktree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from detente.harness.gate import own_files_refusal
from detente.harness.repo_paths import relative_paths


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def checkouts(tmp_path: Path) -> tuple[Path, Path]:
    """A main checkout and a linked worktree of it."""
    main = tmp_path / "main"
    main.mkdir()
    _git(main, "init", "-q", "-b", "main")
    (main / "src").mkdir()
    (main / "src" / "held.py").write_text("x = 1\n")
    _git(main, "add", "-A")
    _git(main, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "i")
    linked = tmp_path / "linked"
    _git(main, "worktree", "add", "-q", "-b", "side", str(linked))
    return main, linked


def test_a_dotdot_through_a_directory_that_does_not_exist_names_the_file_it_reaches(
    checkouts: tuple[Path, Path],
) -> None:
    main, _ = checkouts
    found = relative_paths(main, main, ["nope/../detente.toml", "nope/../src/held.py"])
    assert found == ["detente.toml", "src/held.py"]
    assert own_files_refusal(found) is not None


def test_the_main_checkout_seen_from_a_linked_worktree_is_this_repository(
    checkouts: tuple[Path, Path],
) -> None:
    main, linked = checkouts
    named = [
        str(main / "src" / "held.py"),
        str(main / "detente.toml"),
        str(main / ".git" / "hooks" / "pre-commit"),
        "../main/.claude/settings.json",
    ]
    found = relative_paths(linked, linked, named)
    assert found == [
        "src/held.py",
        "detente.toml",
        ".git/hooks/pre-commit",
        ".claude/settings.json",
    ]
    assert own_files_refusal(found[1:2]) is not None
    assert own_files_refusal(found[2:3]) is not None


def test_a_linked_worktree_seen_from_the_main_checkout_is_this_repository(
    checkouts: tuple[Path, Path],
) -> None:
    main, linked = checkouts
    assert relative_paths(main, main, [str(linked / "src" / "held.py")]) == ["src/held.py"]


def test_another_repository_and_a_nul_in_a_name_are_left_out(
    checkouts: tuple[Path, Path], tmp_path: Path
) -> None:
    main, _ = checkouts
    other = tmp_path / "other"
    other.mkdir()
    _git(other, "init", "-q")
    named = [str(other / "src" / "held.py"), str(tmp_path / "loose.txt"), "src/held.py\0"]
    assert relative_paths(main, main, named) == []


def test_removing_or_moving_a_directory_of_detentes_files_is_refused_like_its_files(
    checkouts: tuple[Path, Path],
) -> None:
    from detente.harness.shell_paths import shell_writes

    main, _ = checkouts
    for command in ("rm -rf .claude", "mv .codex /tmp/elsewhere", "rm -r ./.cursor/"):
        named = relative_paths(main, main, shell_writes(command).paths)
        assert own_files_refusal(named) is not None, command
    assert own_files_refusal(relative_paths(main, main, ["src", ".claude/agents/x.md"])) is None


def test_a_symlink_to_a_file_not_written_yet_names_the_file_it_will_write(
    checkouts: tuple[Path, Path],
) -> None:
    main, _ = checkouts
    (main / "src" / "later.py").symlink_to(main / "src" / "planned.py")
    (main / "config").symlink_to(main / "detente.toml")

    found = relative_paths(main, main, ["src/later.py", "config"])

    assert "src/planned.py" in found
    assert own_files_refusal(found) is not None
