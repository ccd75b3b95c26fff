from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from detente.errors import BranchInUse, NotFoundError, StaleBase, ValidationError, VcsError
from detente.vcs import (
    changed_files,
    claim_branch_name,
    create_worktree,
    diff_summary,
    discard_worktree,
    list_worktrees,
    remove_worktree,
    slugify,
)
from detente.vcs import worktrees as worktrees_module


def snapshot(repo: Path, root: Path) -> tuple[object, ...]:
    """Worktree list plus the directory listing of ``root``: what a failure must not change."""
    return (list_worktrees(repo), sorted(p.name for p in root.iterdir()))


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Fix retry in settlement!", "fix-retry-in-settlement"),
        ("  Café crème -- ÉCLAIR  ", "cafe-creme-eclair"),
        ("src/api/v2_routes.py", "src-api-v2-routes-py"),
        ("日本語", "untitled"),
        ("", "untitled"),
    ],
)
def test_slugify_makes_lowercase_ascii_dash_separated_slugs(text: str, slug: str) -> None:
    assert slugify(text) == slug


def test_slugify_cuts_long_text_at_a_word_boundary() -> None:
    slug = slugify("Refactor the settlement retry loop to use exponential backoff", max_len=30)

    assert slug == "refactor-the-settlement-retry"
    assert len(slugify("x" * 100, max_len=12)) == 12


def test_claim_branch_name_appends_a_short_id(git, tmp_path: Path) -> None:
    branch = claim_branch_name("fix-retry", "01HX2K3M4N5P6Q7R8S9TABCDEF")

    assert branch == "claim/fix-retry-9tabcdef"
    assert git(tmp_path, "check-ref-format", "--branch", branch) == branch


@pytest.mark.parametrize("slug", ["bad..slug", ".hidden", "has space", "tilde~1"])
def test_claim_branch_name_rejects_invalid_ref_names(slug: str) -> None:
    with pytest.raises(ValidationError) as info:
        claim_branch_name(slug, "abc123")

    assert info.value.field == "branch"


def test_worktree_head_is_the_explicit_base_even_when_the_main_checkout_moves(
    repo: Path, tmp_path: Path, git, commit
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    # Before creation the main checkout moves to another branch and commit.
    git(repo, "checkout", "-q", "-b", "elsewhere")
    moved = commit(repo, "other.txt", "other\n")
    assert moved != base

    wt = create_worktree(repo, tmp_path / "wt", "claim/fix-abc", base)

    assert wt.head_oid == base
    assert wt.base_oid == base
    assert git(wt.path, "rev-parse", "HEAD") == base
    assert git(wt.path, "symbolic-ref", "--short", "HEAD") == "claim/fix-abc"
    assert not (wt.path / "other.txt").exists()
    # After creation the main checkout moves again; the claim worktree does not.
    git(repo, "checkout", "-q", "main")
    commit(repo, "later.txt", "later\n")
    git(repo, "checkout", "-q", "--detach", moved)
    assert git(wt.path, "rev-parse", "HEAD") == base


def test_second_worktree_on_the_same_branch_names_the_holder(
    repo: Path, tmp_path: Path, git
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    first = create_worktree(repo, tmp_path / "first", "claim/shared-1", base)
    before = snapshot(repo, tmp_path)

    with pytest.raises(BranchInUse) as info:
        create_worktree(repo, tmp_path / "second", "claim/shared-1", base)

    assert str(first.path) in info.value.detail
    assert info.value.extra["holder"] == str(first.path)
    assert info.value.code == "branch_in_use"
    assert snapshot(repo, tmp_path) == before
    assert not (tmp_path / "second").exists()


def test_branch_checked_out_in_the_main_worktree_is_in_use(repo: Path, tmp_path: Path, git) -> None:
    base = git(repo, "rev-parse", "HEAD")

    with pytest.raises(BranchInUse, match=str(repo.resolve())):
        create_worktree(repo, tmp_path / "wt", "main", base)


def test_a_new_claim_branch_costs_one_ref_update_one_worktree_add_and_one_head_check(
    repo: Path, tmp_path: Path, git, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    real_run = worktrees_module.Git.run
    subcommands: list[str] = []

    def counted(self, *args: str, **kwargs):
        subcommands.append(args[0])
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(worktrees_module.Git, "run", counted)

    create_worktree(repo, tmp_path / "wt", claim_branch_name("fix-retry", "clm_1a2b3c4d"), base)

    assert subcommands == ["update-ref", "worktree", "rev-parse"]


def test_discarding_a_worktree_removes_it_and_the_branch_it_made(
    repo: Path, tmp_path: Path, git
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    before = snapshot(repo, tmp_path)
    wt = create_worktree(repo, tmp_path / "wt", "claim/undo-1", base)
    (wt.path / "scratch.txt").write_text("untracked\n")

    discard_worktree(repo, wt)

    assert snapshot(repo, tmp_path) == before
    assert git(repo, "branch", "--list", "claim/undo-1") == ""


def test_discarding_a_worktree_keeps_a_branch_that_existed_before(
    repo: Path, tmp_path: Path, git
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "branch", "claim/kept-1", base)
    wt = create_worktree(repo, tmp_path / "wt", "claim/kept-1", base)
    assert not wt.new_branch

    discard_worktree(repo, wt)

    assert not (tmp_path / "wt").exists()
    assert git(repo, "rev-parse", "refs/heads/claim/kept-1") == base


def test_existing_free_branch_is_attached_only_at_the_base_commit(
    repo: Path, tmp_path: Path, git, commit
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "branch", "claim/at-base", base)
    newer = commit(repo, "n.txt", "n\n")
    git(repo, "branch", "claim/ahead", newer)

    wt = create_worktree(repo, tmp_path / "ok", "claim/at-base", base)
    assert wt.head_oid == base

    with pytest.raises(StaleBase) as info:
        create_worktree(repo, tmp_path / "stale", "claim/ahead", base)
    assert info.value.extra["actual"] == newer
    assert newer in info.value.detail
    assert not (tmp_path / "stale").exists()


def test_non_empty_target_path_is_a_validation_error(repo: Path, tmp_path: Path, git) -> None:
    base = git(repo, "rev-parse", "HEAD")
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine\n")

    with pytest.raises(ValidationError) as info:
        create_worktree(repo, occupied, "claim/x-1", base)

    assert info.value.field == "path"
    assert (occupied / "keep.txt").read_text() == "mine\n"
    assert git(repo, "branch", "--list", "claim/x-1") == ""


@pytest.mark.parametrize("where", ["under-a-file", "registered-but-missing"])
def test_a_place_git_refuses_leaves_no_branch_and_no_directory(
    repo: Path, tmp_path: Path, git, where: str
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    if where == "under-a-file":
        (tmp_path / "a-file").write_text("not a directory\n")
        target = tmp_path / "a-file" / "wt"
    else:
        target = tmp_path / "stale"
        git(repo, "worktree", "add", "-q", "-b", "elsewhere", str(target))
        shutil.rmtree(target)
    before = snapshot(repo, tmp_path)

    with pytest.raises((ValidationError, VcsError)):
        create_worktree(repo, target, "claim/refused-1", base)

    assert git(repo, "branch", "--list", "claim/*") == ""
    assert snapshot(repo, tmp_path) == before


def test_empty_existing_directory_is_accepted(repo: Path, tmp_path: Path, git) -> None:
    base = git(repo, "rev-parse", "HEAD")
    (tmp_path / "empty").mkdir()

    wt = create_worktree(repo, tmp_path / "empty", "claim/x-2", base)

    assert (wt.path / "README.md").exists()


@pytest.mark.parametrize("base", ["HEAD", "main", "abc1234", "f" * 40])
def test_base_must_be_the_full_oid_of_an_existing_commit(
    repo: Path, tmp_path: Path, base: str
) -> None:
    with pytest.raises(ValidationError) as info:
        create_worktree(repo, tmp_path / "wt", "claim/x-3", base)

    assert info.value.field == "baseCommit"
    assert not (tmp_path / "wt").exists()


def test_claim_worktree_is_locked_and_survives_prune(repo: Path, tmp_path: Path, git) -> None:
    base = git(repo, "rev-parse", "HEAD")
    wt = create_worktree(repo, tmp_path / "wt", "claim/locked-1", base)

    entry = next(e for e in list_worktrees(repo) if e.branch == "claim/locked-1")
    assert entry.locked == "detente claim claim/locked-1"

    shutil.rmtree(wt.path)
    git(repo, "worktree", "prune")
    assert [e.branch for e in list_worktrees(repo)] == ["main", "claim/locked-1"]


def test_list_worktrees_reports_main_first_and_detached_entries(
    repo: Path, tmp_path: Path, git
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "detached"), head)

    main, detached = list_worktrees(repo)

    assert (main.path, main.branch, main.head, main.locked) == (repo.resolve(), "main", head, None)
    assert detached.branch is None
    assert detached.head == head
    assert detached.prunable is False


def test_remove_worktree_touches_only_its_own_entry(repo: Path, tmp_path: Path, git) -> None:
    base = git(repo, "rev-parse", "HEAD")
    keep = create_worktree(repo, tmp_path / "keep", "claim/keep-1", base)
    drop = create_worktree(repo, tmp_path / "drop", "claim/drop-1", base)

    remove_worktree(repo, drop.path)

    entries = list_worktrees(repo)
    assert [e.branch for e in entries] == ["main", "claim/keep-1"]
    assert entries[1].locked == "detente claim claim/keep-1"
    assert (keep.path / "README.md").exists()
    assert not drop.path.exists()
    assert git(repo, "rev-parse", "refs/heads/claim/drop-1") == base


def test_remove_worktree_refuses_uncommitted_changes_unless_forced(
    repo: Path, tmp_path: Path, git
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    wt = create_worktree(repo, tmp_path / "wt", "claim/dirty-1", base)
    (wt.path / "README.md").write_text("edited\n")

    with pytest.raises(VcsError, match="uncommitted changes"):
        remove_worktree(repo, wt.path)
    entry = list_worktrees(repo)[1]
    assert entry.locked == "detente claim claim/dirty-1"
    assert (wt.path / "README.md").read_text() == "edited\n"

    remove_worktree(repo, wt.path, force=True)
    assert len(list_worktrees(repo)) == 1
    assert not wt.path.exists()


def test_remove_worktree_rejects_the_main_worktree_and_unknown_paths(
    repo: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValidationError):
        remove_worktree(repo, repo)
    with pytest.raises(NotFoundError):
        remove_worktree(repo, tmp_path / "never-created")
    assert (repo / "README.md").exists()


def test_changed_files_unions_committed_staged_unstaged_and_untracked(
    repo: Path, tmp_path: Path, git, commit
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    wt = create_worktree(repo, tmp_path / "wt", "claim/files-1", base).path
    (wt / ".gitignore").write_text("build/\n*.log\n")
    commit(wt, "src/app.py", "a = 10\nb = 2\nc = 3\n", "committed edit")
    commit(wt, "dir with space/file name.txt", "spaced\n", "spaced path")
    git(wt, "mv", "docs/guide.md", "docs/renamed.md")
    git(wt, "commit", "-q", "-m", "rename")
    (wt / "staged.txt").write_text("staged\n")
    git(wt, "add", "staged.txt")
    (wt / "README.md").write_text("# unstaged edit\n")
    (wt / "naïve ünïcödé.md").write_text("untracked\n")
    (wt / "new\nline.txt").write_text("odd\n")
    (wt / "build").mkdir()
    (wt / "build" / "out.o").write_text("ignored\n")
    (wt / "debug.log").write_text("ignored\n")

    files = changed_files(wt, base)

    assert files == sorted(
        [
            ".gitignore",
            "README.md",
            "dir with space/file name.txt",
            "docs/guide.md",
            "docs/renamed.md",
            "naïve ünïcödé.md",
            "new\nline.txt",
            "src/app.py",
            "staged.txt",
        ]
    )


def test_changed_files_from_a_subdirectory_are_repo_relative(
    repo: Path, tmp_path: Path, git
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    wt = create_worktree(repo, tmp_path / "wt", "claim/sub-1", base).path
    (wt / "docs" / "new.md").write_text("n\n")
    (wt / "top.txt").write_text("t\n")

    assert changed_files(wt / "src", base) == ["docs/new.md", "top.txt"]


def test_changed_files_is_empty_for_an_untouched_worktree(repo: Path, tmp_path: Path, git) -> None:
    base = git(repo, "rev-parse", "HEAD")
    wt = create_worktree(repo, tmp_path / "wt", "claim/clean-1", base)

    assert changed_files(wt.path, base) == []


def test_changed_files_with_unknown_base_is_a_validation_error(repo: Path) -> None:
    with pytest.raises(ValidationError) as info:
        changed_files(repo, "0123456789" * 4)

    assert info.value.field == "baseCommit"


def test_diff_summary_counts_insertions_and_deletions(
    repo: Path, tmp_path: Path, git, commit
) -> None:
    base = git(repo, "rev-parse", "HEAD")
    wt = create_worktree(repo, tmp_path / "wt", "claim/sum-1", base).path
    commit(wt, "src/app.py", "a = 1\nB = 2\nc = 3\n", "committed: +1 -1")
    (wt / "staged.txt").write_text("s1\ns2\n")  # +2
    git(wt, "add", "staged.txt")
    (wt / "docs" / "guide.md").write_text("one\n")  # -1, unstaged
    (wt / "untracked.txt").write_text("u1\nu2\nu3\nno newline")  # +4
    (wt / "blob.bin").write_bytes(b"\x00\x01\x02binary\n")  # binary: 0

    summary = diff_summary(wt, base)

    assert summary.insertions == 7
    assert summary.deletions == 2
    assert summary.files == [
        "blob.bin",
        "docs/guide.md",
        "src/app.py",
        "staged.txt",
        "untracked.txt",
    ]


def test_diff_summary_counts_binary_tracked_files_as_zero(repo: Path, tmp_path: Path, git) -> None:
    base = git(repo, "rev-parse", "HEAD")
    wt = create_worktree(repo, tmp_path / "wt", "claim/bin-1", base).path
    (wt / "image.png").write_bytes(b"\x89PNG\x00\x00data\n")
    git(wt, "add", "image.png")

    summary = diff_summary(wt, base)

    assert (summary.files, summary.insertions, summary.deletions) == (["image.png"], 0, 0)
