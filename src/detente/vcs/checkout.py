"""Moving a branch that is checked out: the ``receive.denyCurrentBranch=updateInstead`` rule.

When detente advances a branch by CAS (integration), a worktree that has that branch
checked out (the repository's own working tree included) would otherwise keep its old
files and index: ``git status`` there shows a staged reversal of the integrated change,
and the next commit reverts it. As git does for a push with ``updateInstead``:

- every worktree with the branch checked out must be clean in the paths the update
  changes (no staged or unstaged change there, no untracked file where the update
  writes one), else the move is refused with ``branch_in_use`` naming the worktree and
  those dirty paths, and nothing moves (:func:`refuse_dirty_checkouts`, before the CAS);
- after the CAS each such worktree's index and files are updated from the old commit to
  the new one (:func:`update_checkouts`, a two-tree ``read-tree -u -m``, which keeps
  every other local change: a user's unrelated edit, memory files detente maintains in
  the checkout). This is ``updateInstead`` narrowed to the paths that move, because
  detente itself keeps memory documents modified in the main checkout.
"""

from __future__ import annotations

from pathlib import Path

from detente.errors import BranchInUse, VcsError
from detente.vcs.git import Git

__all__ = ["checkouts_of", "dirty_paths", "refuse_dirty_checkouts", "update_checkouts"]


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


def dirty_paths(worktree: Path, old: str, new: str) -> list[str]:
    """Paths the update from ``old`` to ``new`` changes that ``worktree`` has changed too
    (staged, unstaged, or an untracked file in the way); sorted. Other local changes do
    not count: the update keeps them (memory files detente writes in the checkout, a
    user's unrelated edit)."""
    git = Git(worktree)
    status = git.run("status", "--porcelain=v1", "-z", "--untracked-files=all", check=False)
    if not status.ok:
        raise VcsError(f"cannot read the status of worktree {worktree}: {status.stderr.strip()}")
    touched = set(
        git.run("diff", "--name-only", "-z", "--no-renames", old, new, check=False).stdout.split(
            "\0"
        )
    )
    dirty: set[str] = set()
    entries = status.stdout.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code[0] in "RC":
            i += 1  # the rename's source path follows
        if code != "!!" and path in touched:
            dirty.add(path)
    return sorted(dirty)


def refuse_dirty_checkouts(repo: Path, ref: str, old: str, new: str) -> list[Path]:
    """The worktrees to update after moving ``ref`` from ``old`` to ``new``.

    Raises:
        BranchInUse: ``branch_in_use`` naming ``worktree`` and ``dirtyPaths`` when a
            worktree with ``ref`` checked out is not clean (nothing was moved).
    """
    worktrees = checkouts_of(repo, ref)
    for worktree in worktrees:
        dirty = dirty_paths(worktree, old, new)
        if dirty:
            shown = ", ".join(dirty[:10]) + (
                f" and {len(dirty) - 10} more" if len(dirty) > 10 else ""
            )
            raise BranchInUse(
                f"{ref} is checked out in {worktree}, which has uncommitted changes ({shown}): "
                "commit or stash them there, then complete again (nothing was moved)",
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
        result = Git(worktree).run("read-tree", "-u", "-m", old, new, check=False)
        if not result.ok:
            raise VcsError(
                f"moved the branch, but could not update worktree {worktree}: "
                f"{result.stderr.strip()}",
                worktree=str(worktree),
            )
