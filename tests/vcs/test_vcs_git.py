from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from detente.errors import VcsError
from detente.vcs import Git, GitError


def test_run_returns_stdout_text_and_bytes(repo: Path, git) -> None:
    result = Git(repo).run("rev-parse", "HEAD")

    assert result.returncode == 0
    assert result.stdout == git(repo, "rev-parse", "HEAD") + "\n"
    assert result.stdout_bytes == result.stdout.encode()
    assert result.args == ("rev-parse", "HEAD")


def test_text_strips_the_trailing_newline(repo: Path) -> None:
    assert Git(repo).text("rev-parse", "--abbrev-ref", "HEAD") == "main"


def test_input_bytes_are_fed_to_stdin(tmp_path: Path) -> None:
    oid = Git(tmp_path).text("hash-object", "--stdin", input=b"hello\n")

    assert oid == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_failure_raises_vcs_error_naming_subcommand_and_stderr(repo: Path) -> None:
    with pytest.raises(VcsError) as info:
        Git(repo).run("rev-parse", "--verify", "no-such-branch")

    err = info.value
    assert isinstance(err, GitError)
    assert not isinstance(err, subprocess.CalledProcessError)
    assert err.code == "vcs_error"
    assert err.returncode == 128
    assert "git rev-parse failed" in err.detail
    assert "fatal: Needed a single revision" in err.detail
    assert "Needed a single revision" in err.stderr
    assert err.to_problem()["gitCommand"] == "rev-parse"


def test_check_false_returns_the_failed_result_instead_of_raising(repo: Path) -> None:
    result = Git(repo).run("rev-parse", "--verify", "--quiet", "nope", check=False)

    assert result.returncode == 1
    assert not result.ok
    with pytest.raises(GitError):
        result.check_returncode()


def test_detail_prefers_the_fatal_line_over_progress_output(repo: Path, tmp_path: Path) -> None:
    Git(repo).run("worktree", "add", "-b", "taken", str(tmp_path / "w1"), "HEAD")

    with pytest.raises(GitError) as info:
        Git(repo).run("worktree", "add", str(tmp_path / "w2"), "taken")

    assert "fatal: 'taken' is already checked out" in info.value.detail
    assert "Preparing worktree" not in info.value.detail


def test_inherited_git_dir_and_index_are_ignored(
    make_repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine, other = make_repo("mine"), make_repo("other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))

    assert Git(mine).text("rev-parse", "--show-toplevel") == str(mine.resolve())


def test_inherited_object_directories_are_ignored_unless_kept(
    make_repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mine = make_repo("mine")
    empty = tmp_path / "no-objects"
    empty.mkdir()
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(empty))

    assert Git(mine).run("cat-file", "-e", "HEAD^{commit}", check=False).ok
    kept = Git(mine, keep_env={"GIT_OBJECT_DIRECTORY": str(empty)})
    assert not kept.run("cat-file", "-e", "HEAD^{commit}", check=False).ok


def test_kept_variables_apply_to_every_call_and_one_calls_env_wins(repo: Path) -> None:
    show = "alias.show-extra=!printf '%s' \"$EXTRA\""
    kept = Git(repo, keep_env={"EXTRA": "kept"})

    assert kept.text("-c", show, "show-extra") == "kept"
    assert kept.text("-c", show, "show-extra", env={"EXTRA": "call"}) == "call"


def test_environment_pins_locale_and_disables_prompts(repo: Path) -> None:
    show_env = 'alias.showenv=!printf \'%s|%s|%s\' "$LC_ALL" "$GIT_TERMINAL_PROMPT" "$EXTRA"'

    out = Git(repo).text("-c", show_env, "showenv", env={"EXTRA": "yes"})

    assert out == "C|0|yes"


def test_non_ascii_paths_are_printed_verbatim(repo: Path, git) -> None:
    (repo / "café.txt").write_text("x\n")
    git(repo, "add", "café.txt")

    assert "café.txt" in Git(repo).text("diff", "--cached", "--name-only").splitlines()


def test_missing_git_executable_gives_a_clear_vcs_error(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))

    with pytest.raises(VcsError) as info:
        Git(repo).run("status")

    assert "git executable was not found" in info.value.detail
    assert isinstance(info.value, GitError)
    assert info.value.returncode == 127


def test_missing_working_directory_gives_a_vcs_error(tmp_path: Path) -> None:
    with pytest.raises(VcsError, match="does not exist"):
        Git(tmp_path / "nowhere").run("status")


def test_status_entries_pair_a_rename_with_its_source_and_keep_untracked_files() -> None:
    from detente.vcs.changes import status_entries

    out = "R  new.py\0old.py\0?? notes.md\0 M src/a.py\0"
    assert status_entries(out) == [
        ("R ", "new.py", "old.py"),
        ("??", "notes.md", None),
        (" M", "src/a.py", None),
    ]
