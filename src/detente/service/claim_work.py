"""What a claim's own work touches: one definition for every caller.

``claim check`` (the write check), ``GET /v1/claims/{id}/symbols`` (``detente symbols``),
``reconcile`` with ``actual: true`` and the ``pre-commit`` guard of an older hook all ask
"which symbols does this claim's work change?". The answer is the diff from the claim's
*work base* to its worktree (uncommitted and untracked files included) or, without one on
disk, to its branch head, mapped onto symbols on both sides
(:func:`detente.index.diff.touched`).

The work base is the claim's ``baseCommit`` until the claim's history takes in the target
branch: after the rebase ``stale_base`` asks for (or a merge of the target), the commits
it took in are other claims' integrated work, not this claim's. So the base is the
merge-base of the claim's head with the repository's default branch (the branch checked
out in its main worktree, the ``claim complete`` default) when ``baseCommit`` is an
ancestor of that merge-base, else ``baseCommit`` itself (a claim based elsewhere).

A claim's worktree must be a worktree of the claim's repository: a directory that is not
(``/etc``, another repository's checkout) is refused with ``conflict`` (HTTP 409, field
``worktree``), never read as if it were.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from detente.domain.claims.model import Claim
from detente.errors import ConflictError, ValidationError
from detente.vcs.git import Git

if TYPE_CHECKING:
    from detente.index.diff import TouchedFile
    from detente.index.symbols import SymbolIndex

__all__ = ["ClaimWork", "check_worktree", "claim_work", "common_dir", "work_base"]


@dataclass(frozen=True)
class ClaimWork:
    """A claim's own changes mapped onto symbols.

    Attributes:
        base: the work base (full OID) the diff starts from.
        head: the branch head diffed (None when the worktree was read).
        worktree: the worktree read (None when the branch head was).
        files: one :class:`~detente.index.diff.TouchedFile` per changed file, by path.
    """

    base: str
    head: str | None
    worktree: Path | None
    files: list[TouchedFile]


def common_dir(where: Path) -> Path | None:
    """The absolute common git directory of the working tree at ``where`` (None: not in
    a git working tree)."""
    found = _tree_and_common(where)
    return found[1] if found else None


def _tree_and_common(where: Path) -> tuple[Path, Path] | None:
    """``(top level, common git directory)`` of the working tree at ``where``, or None."""
    out = Git(where).run(
        "rev-parse",
        "--path-format=absolute",
        "--show-toplevel",
        "--git-common-dir",
        check=False,
    )
    lines = out.stdout.splitlines()
    if not out.ok or len(lines) != 2:
        return None
    return Path(lines[0]).resolve(), Path(lines[1]).resolve()


def check_worktree(repo: Path | None, worktree: str | None) -> None:
    """Refuse a claim's ``worktree`` that exists and is not a git worktree of ``repo``
    (its top level: a linked worktree or the main checkout). A path that does not exist
    yet is accepted (its creator makes it later); a relative one is left to the claim's
    own validation. An opening with ``createWorktree`` is not asked this: the service
    creates the worktree there itself and git refuses a taken place.

    Raises:
        ValidationError: ``validation_error`` (HTTP 422, field ``worktree``).
    """
    if repo is None or not worktree or not Path(worktree).is_absolute():
        return
    tree = Path(worktree)
    if not tree.exists():
        return
    mine = _tree_and_common(repo)
    found = _tree_and_common(tree) if tree.is_dir() else None
    if mine is None or found is None or found[1] != mine[1] or found[0] != tree.resolve():
        raise ValidationError(
            f"worktree {worktree!r} exists and is not a git worktree of this repository "
            "(name a path that does not exist yet, or one `git worktree list` shows)",
            field="worktree",
        )


def work_base(git: Git, claim_base: str, head: str, target: str) -> str:
    """Where a claim's own changes start (see the module docstring).

    Args:
        git: git in the claim's repository (or worktree).
        claim_base: the claim's ``baseCommit``.
        head: the claim's head commit (its worktree's ``HEAD`` or its branch).
        target: the branch its work integrates into (``refs/heads/main``).

    Returns:
        ``merge-base(head, target)`` when ``claim_base`` is one of its ancestors (or it),
        else ``claim_base``.
    """
    found = git.run("merge-base", head, target, check=False)
    merged = found.stdout.strip() if found.ok else ""
    if not merged or merged.startswith(claim_base):
        return claim_base
    inside = git.run("merge-base", "--is-ancestor", claim_base, merged, check=False)
    return merged if inside.returncode == 0 else claim_base


def claim_work(repo: Path, index: SymbolIndex, claim: Claim) -> ClaimWork:
    """What ``claim``'s own work changes now.

    Args:
        repo: the repository's checkout (the server's path for it).
        index: its symbol index.
        claim: the claim.

    Returns:
        The :class:`ClaimWork`: the worktree's changes when it exists on disk, else the
        branch head's.

    Raises:
        ConflictError: ``conflict`` (HTTP 409, ``field: worktree``) when the worktree
            exists and is not a git worktree of ``repo``.
        ValidationError: ``validation_error`` when there is neither a worktree on disk
            nor a branch (no work to diff), or the base names no commit.
        VcsError: ``vcs_error`` when git fails otherwise.
    """
    from detente.index.diff import touched  # a claim's work only: not on every opening

    target = _default_branch(repo)
    if claim.worktree and Path(claim.worktree).is_dir():
        tree = Path(claim.worktree)
        mine = common_dir(repo)
        if mine is None or common_dir(tree) != mine:
            raise ConflictError(
                f"claim {claim.id}'s worktree {tree} is not a git worktree of repository "
                f"{claim.repo!r}: nothing there is this claim's work",
                field="worktree",
                claimId=claim.id,
                worktree=str(tree),
            )
        git = Git(tree)
        head = git.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        base = claim.base_commit
        if head.ok and head.stdout.strip():
            base = work_base(git, claim.base_commit, head.stdout.strip(), target)
        return ClaimWork(base, None, tree, touched(index, base, worktree=tree))
    if claim.branch:
        head_oid = index.commit_oid(claim.branch)
        base = work_base(index.git, claim.base_commit, head_oid, target)
        return ClaimWork(base, head_oid, None, touched(index, base, head=head_oid))
    raise ValidationError(
        f"claim {claim.id} has neither a worktree on disk nor a branch: no work to diff",
        field="claimId",
    )


def _default_branch(repo: Path) -> str:
    """``refs/heads/<branch>`` checked out in the main worktree (``main`` if detached)."""
    found = common_dir(repo)
    if found is not None:
        out = Git(repo).run("--git-dir", str(found), "symbolic-ref", "--quiet", "HEAD", check=False)
        if out.ok and out.stdout.strip():
            return out.stdout.strip()
    return "refs/heads/main"
