"""The execution plane: git through one subprocess wrapper, and one worktree per claim.

Every git failure surfaces as a :class:`~detente.errors.VcsError` (or a more specific
detente error such as ``BranchInUse``, ``StaleBase`` or ``ValidationError``), never as a
raw subprocess exception.
"""

from typing import TYPE_CHECKING, Any

from detente.vcs.git import Git, GitError, GitResult
from detente.vcs.repo import (
    RepoInfo,
    current_oid,
    default_store_path,
    is_ancestor,
    open_repo,
    principals_path,
    resolve_commit,
)

if TYPE_CHECKING:
    from detente.vcs.worktrees import (
        DiffSummary,
        Worktree,
        WorktreeEntry,
        changed_files,
        claim_branch_name,
        create_worktree,
        default_worktree_path,
        diff_summary,
        discard_worktree,
        list_worktrees,
        remove_worktree,
        slugify,
    )

#: Names of :mod:`detente.vcs.worktrees`, imported on first use (a read of claims opens
#: the repository but never touches a worktree).
_WORKTREES = frozenset(
    {
        "DiffSummary",
        "Worktree",
        "WorktreeEntry",
        "changed_files",
        "claim_branch_name",
        "create_worktree",
        "default_worktree_path",
        "diff_summary",
        "discard_worktree",
        "list_worktrees",
        "remove_worktree",
        "slugify",
    }
)


def __getattr__(name: str) -> Any:
    if name in _WORKTREES:
        from detente.vcs import worktrees

        return getattr(worktrees, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DiffSummary",
    "Git",
    "GitError",
    "GitResult",
    "RepoInfo",
    "Worktree",
    "WorktreeEntry",
    "changed_files",
    "claim_branch_name",
    "create_worktree",
    "current_oid",
    "default_store_path",
    "default_worktree_path",
    "diff_summary",
    "discard_worktree",
    "is_ancestor",
    "list_worktrees",
    "open_repo",
    "principals_path",
    "remove_worktree",
    "resolve_commit",
    "slugify",
]
