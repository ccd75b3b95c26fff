"""``git merge-tree --write-tree`` read as a prediction: clean or conflicted, the
conflicted paths exactly (spaces and all), the conflicting hunks as git marks them.
Real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from detente.vcs.git import Git, GitError
from detente.vcs.merge_tree import MAX_HUNK_LINES, branch_changes, predict_merge

from support import git_out

TEXT = "def a():\n    return 1\ndef b():\n    return 2\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text(TEXT)
    (root / "my notes.txt").write_text("one\ntwo\n")
    git_out(tmp_path, "init", "-q", "-b", "main", str(root))
    git_out(root, "add", "-A")
    git_out(root, "commit", "-q", "-m", "base")
    return root


def _branch(repo: Path, name: str, edits: dict[str, str | None]) -> str:
    git_out(repo, "checkout", "-q", "-b", name, "main")
    for rel, text in edits.items():
        if text is None:
            (repo / rel).unlink()
        else:
            (repo / rel).write_text(text)
    git_out(repo, "add", "-A")
    git_out(repo, "commit", "-q", "-m", name)
    git_out(repo, "checkout", "-q", "main")
    return git_out(repo, "rev-parse", name)


def test_edits_of_separate_lines_merge_cleanly(repo: Path) -> None:
    one = _branch(repo, "one", {"calc.py": TEXT.replace("return 1", "return 10")})
    two = _branch(repo, "two", {"my notes.txt": "one\ntwo\nthree\n"})

    found = predict_merge(Git(repo), one, two)

    assert found.clean and found.files == () and found.hunks == ()


def test_adjacent_edits_conflict_with_the_hunk_as_git_marks_it(repo: Path) -> None:
    one = _branch(repo, "one", {"calc.py": TEXT.replace("return 1", "return 10")})
    two = _branch(repo, "two", {"calc.py": TEXT.replace("def b():", "def b(x=0):")})

    found = predict_merge(Git(repo), one, two)

    assert not found.clean and found.files == ("calc.py",)
    [hunk] = found.hunks
    assert hunk.path == "calc.py" and hunk.line == 2
    lines = hunk.text.splitlines()
    assert lines[0].startswith("<<<<<<< ") and lines[-1].startswith(">>>>>>> ")
    assert "    return 10" in lines and "def b(x=0):" in lines


def test_a_path_with_a_space_is_named_exactly(repo: Path) -> None:
    one = _branch(repo, "one", {"my notes.txt": "uno\ntwo\n"})
    two = _branch(repo, "two", {"my notes.txt": "eins\ntwo\n"})

    found = predict_merge(Git(repo), one, two)

    assert found.files == ("my notes.txt",)
    assert [h.path for h in found.hunks] == ["my notes.txt"]


def test_a_modify_delete_conflict_names_the_file_without_hunks(repo: Path) -> None:
    one = _branch(repo, "one", {"calc.py": TEXT + "# more\n"})
    two = _branch(repo, "two", {"calc.py": None})

    found = predict_merge(Git(repo), one, two)

    assert not found.clean and found.files == ("calc.py",)
    assert all("<<<<<<<" not in h.text for h in found.hunks)


def test_a_long_hunk_is_cut_with_a_note(repo: Path) -> None:
    long_one = "".join(f"line {i} one\n" for i in range(100))
    long_two = "".join(f"line {i} two\n" for i in range(100))
    one = _branch(repo, "one", {"my notes.txt": long_one})
    two = _branch(repo, "two", {"my notes.txt": long_two})

    [hunk] = predict_merge(Git(repo), one, two).hunks

    lines = hunk.text.splitlines()
    assert len(lines) == MAX_HUNK_LINES and lines[-1].endswith("more lines)")


def test_an_unknown_commit_is_a_vcs_error(repo: Path) -> None:
    with pytest.raises(GitError):
        predict_merge(Git(repo), "main", "0" * 40)


def test_branch_changes_lists_every_path_a_branch_changed(repo: Path) -> None:
    head = _branch(repo, "one", {"calc.py": TEXT + "\n", "my notes.txt": None, "new.py": "x\n"})

    assert branch_changes(Git(repo), "main", head) == ("calc.py", "my notes.txt", "new.py")
