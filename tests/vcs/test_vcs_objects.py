"""Objects written by dulwich (or, where it cannot, by git's CLI) are the objects git
would write (``git`` itself is the oracle: the same OIDs as ``hash-object`` /
``write-tree``, and ``fsck --strict`` clean)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from detente.vcs.git import Git
from detente.vcs.memory_commit import BranchWriter
from detente.vcs.objects import DulwichObjects, GitObjects, open_objects

GitRunner = Callable[..., str]
RepoFactory = Callable[..., Path]


def _through_an_index(repo: Path, git: GitRunner, tip: str, files: dict[str, str]) -> str:
    """The tree git makes of ``tip`` with ``files`` (path -> blob) in a scratch index."""
    env_index = repo / ".git" / "oracle-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(env_index)}
    subprocess.run(["git", "read-tree", tip], cwd=repo, env=env, check=True)
    for path, blob in files.items():
        subprocess.run(
            ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"],
            cwd=repo,
            env=env,
            check=True,
        )
    out = subprocess.run(
        ["git", "write-tree"], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def test_a_blob_written_by_dulwich_has_gits_oid_and_reads_back(repo: Path, git: GitRunner) -> None:
    objects = open_objects(Git(repo))
    data = b"line one\nline two\n\x00binary\n"

    oid = objects.blob(data)

    (repo / "scratch").write_bytes(data)
    assert isinstance(objects, DulwichObjects)
    assert oid == git(repo, "hash-object", "scratch")
    assert git(repo, "cat-file", "-t", oid) == "blob"
    assert objects.blob(data) == oid  # written twice: the same object, left alone


def test_a_memory_commit_builds_the_trees_git_would_build_and_fsck_finds_nothing(
    repo: Path, git: GitRunner
) -> None:
    tip = git(repo, "rev-parse", "main")
    files = {
        "docs/guide.md": b"v2\n",  # an existing file in an existing directory
        "docs/deep/new/NOTES.md": b"new directories\n",  # two new directories
        "docs.md": b"sorts before docs/\n",  # a file named like the directory, plus ".md"
        "a.b/c.md": b"a directory with a dot\n",
    }

    new = BranchWriter(repo).commit("refs/heads/main", tip, files, "m\n\nDetente-Memory: x\n")

    blobs = {}
    for path, data in files.items():
        (repo / "scratch").write_bytes(data)
        blobs[path] = git(repo, "hash-object", "-w", "scratch")
    assert git(repo, "rev-parse", f"{new}^{{tree}}") == _through_an_index(repo, git, tip, blobs)
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    assert git(repo, "show", "main:docs/deep/new/NOTES.md") == "new directories"
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn|%B", new) == (
        "detente <detente@localhost>|detente|m\n\nDetente-Memory: x"
    )


def test_a_writer_on_top_of_its_own_commit_runs_one_git_process_and_reads_a_moved_tip(
    repo: Path, git: GitRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = BranchWriter(repo)
    tip = git(repo, "rev-parse", "main")
    first = writer.commit("refs/heads/main", tip, {"docs/a.md": b"1\n"}, "m\n")
    calls: list[str] = []
    run = Git.run

    def counted(self: Git, *args: str, **kw: Any) -> Any:
        calls.append(next(a for a in args if not a.startswith("-") and "=" not in a))
        return run(self, *args, **kw)

    monkeypatch.setattr(Git, "run", counted)
    second = writer.commit("refs/heads/main", first, {"docs/a.md": b"2\n"}, "m\n")
    assert calls == ["update-ref"]
    (repo / "src" / "app.py").write_text("human\n")
    git(repo, "commit", "-q", "-am", "human")
    human = git(repo, "rev-parse", "main")
    third = writer.commit("refs/heads/main", human, {"docs/a.md": b"3\n"}, "m\n")

    assert git(repo, "rev-parse", f"{third}^") == human and second != third
    assert git(repo, "show", "main:src/app.py") == "human"
    assert git(repo, "show", "main:docs/a.md") == "3"


def test_a_shared_repository_gets_git_s_permissions_on_new_objects(
    make_repo: RepoFactory, git: GitRunner
) -> None:
    repo = make_repo("shared")
    git(repo, "config", "core.sharedRepository", "0660")
    objects = open_objects(Git(repo))

    oid = objects.blob(b"shared\n")
    (repo / "scratch").write_text("by git\n")
    by_git = git(repo, "hash-object", "-w", "scratch")

    def modes(o: str) -> tuple[int, int]:
        folder = repo / ".git" / "objects" / o[:2]
        return folder.stat().st_mode & 0o7777, (folder / o[2:]).stat().st_mode & 0o7777

    assert git(repo, "cat-file", "-p", oid) == "shared"
    assert modes(oid)[1] == modes(by_git)[1] == 0o440
    assert modes(oid)[0] & 0o2770 == 0o2770  # group-writable, setgid, as git makes it


def test_an_object_whose_lock_a_killed_writer_left_is_written_by_git(
    repo: Path, git: GitRunner
) -> None:
    data = b"the lock of a writer killed while it wrote this\n"
    (repo / "scratch").write_bytes(data)
    oid = git(repo, "hash-object", "scratch")
    folder = repo / ".git" / "objects" / oid[:2]
    folder.mkdir(exist_ok=True)
    (folder / f"{oid[2:]}.lock").write_bytes(b"half an obj")

    written = open_objects(Git(repo)).blob(data)

    assert written == oid and git(repo, "cat-file", "-p", oid) == data.decode().rstrip("\n")


def test_a_repository_dulwich_cannot_open_gets_its_objects_through_git(
    make_repo: RepoFactory, git: GitRunner
) -> None:
    repo = make_repo("precious")
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.preciousObjects", "true")  # unknown to dulwich
    tip = git(repo, "rev-parse", "main")
    writer = BranchWriter(repo)

    new = writer.commit("refs/heads/main", tip, {"docs/deep/N.md": b"n\n"}, "m\n")
    again = writer.commit("refs/heads/main", new, {"docs/deep/N.md": b"2\n"}, "m\n")

    assert isinstance(writer._objects, GitObjects)
    assert git(repo, "show", "main:docs/deep/N.md") == "2"
    assert git(repo, "rev-parse", f"{again}^") == new
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn", again) == (
        "detente <detente@localhost>|detente"
    )
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""


def test_a_sha256_repository_gets_sha256_objects(tmp_path: Path, git: GitRunner) -> None:
    repo = tmp_path / "sha256"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", "--object-format=sha256")
    (repo / "README.md").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "i")
    tip = git(repo, "rev-parse", "main")

    new = BranchWriter(repo).commit("refs/heads/main", tip, {"d/N.md": b"n\n"}, "m\n")

    assert len(new) == 64 and git(repo, "show", "main:d/N.md") == "n"
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""


def test_trees_packed_by_gc_are_read_back(repo: Path, git: GitRunner) -> None:
    tip = git(repo, "rev-parse", "main")
    git(repo, "gc", "-q", "--prune=now")  # every object of the tip now in a pack

    new = BranchWriter(repo).commit("refs/heads/main", tip, {"docs/guide.md": b"v3\n"}, "m\n")

    assert git(repo, "show", "main:docs/guide.md") == "v3"
    assert git(repo, "ls-tree", "-r", "--name-only", new) == git(
        repo, "ls-tree", "-r", "--name-only", tip
    )
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
