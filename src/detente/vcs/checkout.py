"""Moving a branch that is checked out: the ``receive.denyCurrentBranch=updateInstead`` rule.

When detente advances a branch by CAS (integration), a worktree that has that branch
checked out (the repository's own working tree included) would otherwise keep its old
files and index: ``git status`` there shows a staged reversal of the integrated change,
and the next commit reverts it. As git does for a push with ``updateInstead``:

- every worktree with the branch checked out must be clean: no staged or unstaged
  change to any tracked file, and no untracked file where the update writes one. Else
  the move is refused with ``branch_in_use`` naming the worktree and its dirty paths,
  and nothing moves (:func:`refuse_dirty_checkouts`, before the CAS). The one exception
  is what detente itself maintains there: registered memory documents (a section patch
  writes into the repository's own working tree, and its own revision and file-hash
  checks guard every write to them) do not count, as long as the update leaves that
  file alone: ``read-tree`` keeps them exactly as they are;
- after the CAS each such worktree's index and files are updated from the old commit to
  the new one (:func:`update_checkouts`, a two-tree ``read-tree -u -m``, which keeps the
  maintained memory documents as they are).

Untracked files that are not in the way do not count (git's rule too): claim worktrees,
build output and editor files live there.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from detente.errors import BranchInUse, VcsError
from detente.vcs.changes import status_entries
from detente.vcs.git import Git

__all__ = [
    "checkout_base",
    "checkouts_of",
    "dirty_paths",
    "refuse_dirty_checkouts",
    "update_checkouts",
]


def checkouts_of(repo: Path, ref: str) -> list[Path]:
    """Worktrees (the main one included) whose ``HEAD`` is the branch ``ref`` and that
    have an index (something was checked out there).

    Read from the files git keeps (``HEAD``, ``index``, ``worktrees/*/gitdir``): an
    integration asks this on every completion, so it spawns no process.
    """
    dot = repo / ".git"
    if dot.is_file():  # ``repo`` is itself a linked worktree: ask git
        return _checkouts_by_git(repo, ref)
    common = dot if dot.is_dir() else repo
    found: list[Path] = []
    if dot.is_dir() and _on_branch(common, ref):
        found.append(repo)
    linked = common / "worktrees"
    if linked.is_dir():
        for admin in sorted(linked.iterdir()):
            gitdir = admin / "gitdir"
            if _on_branch(admin, ref) and gitdir.is_file():
                found.append(Path(gitdir.read_text().strip()).parent)
    return found


def _on_branch(admin: Path, ref: str) -> bool:
    """``admin`` (a git dir) has ``ref`` checked out and an index."""
    try:
        head = (admin / "HEAD").read_text().strip()
    except OSError:
        return False
    return head == f"ref: {ref}" and (admin / "index").is_file()


def _checkouts_by_git(repo: Path, ref: str) -> list[Path]:
    out = Git(repo).run("worktree", "list", "--porcelain", "-z", check=False)
    if not out.ok:
        return []
    found: list[Path] = []
    current: Path | None = None
    for field in out.stdout.split("\0"):
        if field.startswith("worktree "):
            current = Path(field[len("worktree ") :])
        elif field == f"branch {ref}" and current is not None and _has_index(current):
            found.append(current)
    return found


def _has_index(worktree: Path) -> bool:
    out = Git(worktree).run("rev-parse", "--git-path", "index", check=False)
    if not out.ok:
        return False
    index = Path(out.stdout.strip())
    return (index if index.is_absolute() else worktree / index).exists()


#: How far back along ``old``'s first parents :func:`checkout_base` looks for the commit a
#: checkout's index still holds after an interrupted update.
_STALE_DEPTH = 16


#: ``(worktree, old) -> base`` as :func:`dirty_paths` found it, for the
#: :func:`update_checkouts` that follows it in the same command (taken once).
_CHECKED: dict[tuple[str, str], str] = {}
_CHECKED_LIMIT = 256


def _remember_base(worktree: Path, old: str, base: str) -> None:
    if len(_CHECKED) >= _CHECKED_LIMIT:
        _CHECKED.clear()
    _CHECKED[(str(worktree), old)] = base


def checkout_base(worktree: Path, old: str) -> str:
    """The commit whose tree ``worktree``'s index holds: ``old`` normally.

    When detente moved the branch and was killed before it updated the checkout
    (``kill -9`` between ``update-ref`` and ``read-tree``), the branch names ``old`` but the
    index and files are still those of an earlier commit; that commit (one of the last
    :data:`_STALE_DEPTH` first-parent ancestors of ``old``) is returned, so the next update
    can finish the interrupted one instead of refusing forever. An index that matches no
    such commit (staged work, unmerged entries) gives ``old``.
    """
    git = Git(worktree)
    index = git.run("write-tree", check=False)
    if not index.ok:
        return old
    tree = index.stdout.strip()
    log = git.run("log", "--first-parent", f"-n{_STALE_DEPTH}", "--format=%H %T", old, check=False)
    if not log.ok:
        return old
    for line in log.stdout.splitlines():
        commit, _, commit_tree = line.partition(" ")
        if commit_tree == tree:
            return commit
    return old


def dirty_paths(worktree: Path, old: str, new: str, maintained: Collection[str] = ()) -> list[str]:
    """What keeps ``worktree`` from following its branch from ``old`` to ``new``; sorted.

    Every staged or unstaged change to a tracked file (the whole worktree, not only the
    paths that move), and every untracked file the update would write over. A path in
    ``maintained`` does not count unless the update changes that path too.

    Args:
        worktree: a worktree with the branch checked out.
        old / new: the commits the branch moves between.
        maintained: repo-relative paths of the files detente keeps modified in
            checkouts (registered memory documents).

    Raises:
        VcsError: git cannot read the worktree's status.
    """
    git = Git(worktree)
    status = git.run("status", "--porcelain=v1", "-z", "--untracked-files=all", check=False)
    if not status.ok:
        raise VcsError(f"cannot read the status of worktree {worktree}: {status.stderr.strip()}")
    # An interrupted update left the index at an earlier commit: its staged difference from
    # the branch is that update's, not anyone's work; only the files' changes count. With
    # nothing staged the index is the branch's own tree: no git call needed to know it.
    entries = status_entries(status.stdout)
    staged = any(code[0] not in " ?!" for code, _, _ in entries)
    base = checkout_base(worktree, old) if staged else old
    _remember_base(worktree, old, base)
    touched = set(
        git.run("diff", "--name-only", "-z", "--no-renames", base, new, check=False).stdout.split(
            "\0"
        )
    )
    dirty: set[str] = set()
    for code, path, source in entries:
        if source is not None and base == old:
            dirty.add(source)  # a rename's source path changed too
        if code == "!!":
            continue
        if base != old and code[1] == " ":
            continue  # staged only: the interrupted update's own difference
        if code == "??":
            if path in touched:
                dirty.add(path)
            continue
        if path not in touched and path in maintained:
            continue
        dirty.add(path)
    return sorted(dirty)


def refuse_dirty_checkouts(
    repo: Path, ref: str, old: str, new: str, maintained: Collection[str] = ()
) -> list[Path]:
    """The worktrees to update after moving ``ref`` from ``old`` to ``new``.

    Args:
        repo: a directory of the repository.
        ref: the branch that moves (``refs/heads/main``).
        old / new: the commits it moves between.
        maintained: files detente keeps modified in checkouts (see :func:`dirty_paths`).

    Raises:
        BranchInUse: ``branch_in_use`` naming ``worktree`` and ``dirtyPaths`` when a
            worktree with ``ref`` checked out is not clean (nothing was moved).
        VcsError: git cannot read a worktree's status.
    """
    worktrees = checkouts_of(repo, ref)
    for worktree in worktrees:
        dirty = dirty_paths(worktree, old, new, maintained)
        if dirty:
            shown = ", ".join(dirty[:10]) + (
                f" and {len(dirty) - 10} more" if len(dirty) > 10 else ""
            )
            raise BranchInUse(
                f"{ref} is checked out in {worktree}, which is not clean ({shown}): "
                "commit or stash those changes there, then complete again (nothing was moved)",
                worktree=str(worktree),
                dirtyPaths=dirty,
                ref=ref,
            )
    return worktrees


def update_checkouts(worktrees: list[Path], old: str, new: str) -> None:
    """Bring each (clean) worktree's index and files from ``old`` to ``new``.

    Raises:
        VcsError: git refused (a file appeared since the check); the ref has moved.
    """
    for worktree in worktrees:
        # old, or the commit an interrupted update left (known already when this process
        # has just checked the worktree with dirty_paths)
        base = _CHECKED.pop((str(worktree), old), None) or checkout_base(worktree, old)
        result = Git(worktree).run("read-tree", "-u", "-m", base, new, check=False)
        if not result.ok:
            raise VcsError(
                f"moved the branch, but could not update worktree {worktree}: "
                f"{result.stderr.strip()}",
                worktree=str(worktree),
            )
