"""A hook keeps the repository variables git gave it, and reads pushed commits right."""

from __future__ import annotations

from pathlib import Path

from hooks_harness import Shared, commit, git

from detente.hooks.gitread import HookRepo, hook_environment


def test_the_hooks_repository_variables_are_kept_and_made_absolute(tmp_path: Path) -> None:
    environ = {
        "GIT_DIR": ".",
        "GIT_INDEX_FILE": ".git/next-index-123.lock",
        "GIT_OBJECT_DIRECTORY": "/srv/shared.git/objects/tmp_objdir-incoming-x",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": "/srv/shared.git/objects",
        "GIT_QUARANTINE_PATH": "/srv/shared.git/objects/tmp_objdir-incoming-x",
        "GIT_PREFIX": "src/",
        "HOME": "/home/someone",
    }

    kept = hook_environment(environ, tmp_path)

    assert kept == {
        "GIT_DIR": str(tmp_path),
        "GIT_INDEX_FILE": str(tmp_path / ".git" / "next-index-123.lock"),
        "GIT_OBJECT_DIRECTORY": "/srv/shared.git/objects/tmp_objdir-incoming-x",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": "/srv/shared.git/objects",
        "GIT_QUARANTINE_PATH": "/srv/shared.git/objects/tmp_objdir-incoming-x",
    }


def test_added_commits_carry_their_trailers_and_first_parent_files(shared: Shared) -> None:
    git(shared.work, "checkout", "-q", "-b", "side")
    first = commit(shared.work, "a.py", "a = 2\n", "Detente-Claim: clm_1")
    git(shared.work, "checkout", "-q", "main")
    commit(shared.work, "c.py", "c = 1\n")
    git(shared.work, "merge", "-q", "--no-ff", "-m", "merge", "-m", "Detente-Claim: clm_2", "side")
    merge = git(shared.work, "rev-parse", "HEAD")
    git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/topic")

    found = HookRepo(shared.bare).added_commits(shared.m0, merge)

    by_oid = {c.oid: c for c in found}
    assert len(found) == 3 and found[-1].oid == merge
    assert by_oid[first].claim_ids == ("clm_1",) and by_oid[first].files == ("a.py",)
    assert by_oid[merge].claim_ids == ("clm_2",) and by_oid[merge].files == ("a.py",)
    assert HookRepo(shared.bare).commit(shared.m0).files == ("a.py", "b.py")  # a root commit
