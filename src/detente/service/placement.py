"""Where a claim's work lives: the service places its branch and worktree.

Opening a claim (or taking one over) with ``createWorktree`` creates the claim's topic
branch and worktree inside the command, on every surface alike (the CLI asks by
default; an HTTP body or an MCP tool may ask). One failure rule holds: **git refusing
records nothing, and a command that records nothing leaves no worktree.** So the order
is

1. :func:`plan_worktree` settles every fact once, before any git call: the branch
   (the caller's, checked as git would, or ``claim/<slug>-<claim id tail>``), the
   directory (the caller's absolute path, or the default next to the main worktree,
   :func:`~detente.vcs.worktrees.default_worktree_path`) and the start commit (resolved
   by the caller of :func:`placed`, once);
2. :func:`placed` creates the branch and worktree at the start commit (one
   ``git worktree add -b``), then runs the command; if git refuses, the command never
   runs; if the command fails (refused, or its append fails), the worktree and the
   branch it made are removed before the error goes on.

The server places worktrees of remote callers the same way, next to its own checkout of
the repository: the claim records ``branch`` and ``worktree`` as created.

Where a claim works is its own (:func:`check_workplace`, asked by every opening and
takeover, whatever the surface): its branch is never a protected branch (the
repository's default branch, or a ``detente.protectedRef`` of its git config), in any
spelling (``main``, ``refs/heads/main``), and its worktree never another checkout of the
repository (the main working tree, or a linked worktree on a branch other than the
claim's; a detached one belongs to no branch and becomes the claim's), nor a directory
inside a checkout (git there would list it as untracked and ``git add -A`` record it as
an embedded repository) unless that checkout's ``.gitignore`` ignores it. A claim in
the main checkout would make its pre-commit guard judge a human's commits as the
claim's, and a claim on the protected branch would integrate by committing to it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from detente.domain.claims.opening import (
    refuse_taken_workspace,
    workspace_branch,
    workspace_path,
)
from detente.errors import ValidationError

if TYPE_CHECKING:
    from detente.domain.claims.commands import OpenClaim
    from detente.domain.state import RepoState
    from detente.service.core import RepoConfig

__all__ = ["Placement", "check_workplace", "placed", "plan_worktree"]

T = TypeVar("T")


@dataclass(frozen=True)
class Placement:
    """A claim's worktree to be: the repository it belongs to, its branch and directory.

    Attributes:
        repo: the server's checkout of the repository (where ``git worktree add`` runs).
        branch: the short branch name, e.g. ``claim/fix-retry-1a2b3c4d``.
        path: the absolute worktree directory (not created yet).
    """

    repo: Path
    branch: str
    path: Path


def plan_worktree(repo: RepoConfig, cmd: OpenClaim, claim_id: str) -> Placement | None:
    """The placement ``cmd`` asks for (None when it asks for no worktree). No git call.

    Args:
        repo: the served repository.
        cmd: the opening; ``create_worktree`` asks, ``branch`` and ``worktree`` (an
            absolute path) override the defaults.
        claim_id: the new claim's id (its tail names the default branch).

    Returns:
        The :class:`Placement`, or None.

    Raises:
        ValidationError: ``validation_error``: field ``createWorktree`` for a draft (a
            draft has no worktree) or a repository served without a path; ``branch``
            for a name git refuses; ``worktree`` for a relative path.
    """
    if not cmd.create_worktree:
        return None
    if cmd.draft:
        raise ValidationError(
            "a draft gets no worktree: announce it first, or drop createWorktree",
            field="createWorktree",
        )
    if repo.path is None:
        raise ValidationError(
            f"repository {repo.name!r} has no checkout on this server: no worktree can be "
            "created for it",
            field="createWorktree",
        )
    from detente.vcs.worktrees import claim_branch_name, default_worktree_path, slugify

    branch = workspace_branch(cmd.branch) or claim_branch_name(slugify(cmd.objective), claim_id)
    given = workspace_path(cmd.worktree)
    path = Path(given) if given else default_worktree_path(repo.main_worktree or repo.path, branch)
    return Placement(repo=repo.path, branch=branch, path=path)


def check_workplace(
    repo: RepoConfig, branch: str | None, worktree: str | None, state: RepoState | None = None
) -> None:
    """Refuse a claim's ``branch`` or ``worktree`` that is not its own (module docstring).

    Args:
        repo: the served repository (no git call when it has no checkout, or the claim
            names no worktree and the branch is plainly not protected).
        branch: the branch as the caller spelled it (None: none named).
        worktree: the absolute worktree directory asked for (None: none named).
        state: the repository's projection: a branch or worktree another live claim
            records is refused first, as ``branch_in_use`` naming that claim.

    Raises:
        BranchInUse: ``branch_in_use`` (409): another live claim records it.
        ValidationError: ``validation_error`` (HTTP 422) naming ``branch`` (a protected
            branch, or a name git refuses) or ``worktree`` (the main working tree, a
            linked worktree of another branch, a directory inside a checkout that its
            ``.gitignore`` does not ignore, or a relative path).
    """
    name = workspace_branch(branch)
    path = workspace_path(worktree)
    if state is not None:
        refuse_taken_workspace(state, name, path)
    if name is not None and _same_branch(repo, name, _protected_branches(repo)):
        raise ValidationError(
            f"branch {branch!r} is the protected branch of repository {repo.name!r}: a claim "
            "works on a branch of its own and integrates by `claim complete`",
            field="branch",
        )
    if path is None or repo.path is None:
        return
    from detente.vcs.worktrees import list_worktrees, same_path

    for i, entry in enumerate(list_worktrees(repo.path)):
        if entry.prunable:
            continue  # a registration whose directory is gone is no checkout (git refuses)
        if not entry.bare and _lies_inside(Path(path), entry.path):
            if _ignored_in(entry.path, Path(path)):
                continue  # a `.worktrees/` the checkout ignores stays out of its status
            raise ValidationError(
                f"worktree {worktree!r} lies inside the checkout {str(entry.path)!r}: git "
                "there would list it as untracked (and `git add -A` record it as an "
                "embedded repository); name a directory outside every checkout, or one "
                "that checkout's .gitignore ignores",
                field="worktree",
            )
        if not same_path(entry.path, Path(path)):
            continue
        if i == 0 and not entry.bare:
            raise ValidationError(
                f"worktree {worktree!r} is the repository's own working tree: a claim works "
                "in a worktree of its own (createWorktree makes one)",
                field="worktree",
            )
        if entry.branch is not None and (
            name is None or not _same_branch(repo, name, {entry.branch})
        ):
            # A detached worktree belongs to no branch: the claim naming it makes it its own.
            raise ValidationError(
                f"worktree {worktree!r} is the checkout of branch {entry.branch!r}, not of "
                + (f"the claim's branch {name!r}" if name else "a branch the claim names")
                + ": name that branch, or a worktree of its own",
                field="worktree",
            )


def _lies_inside(path: Path, root: Path) -> bool:
    """Is ``path`` strictly below the directory ``root`` (symlinks resolved as far as
    they exist, ``..`` folded, case folded where the platform ignores it)?"""
    inner = os.path.normcase(str(path.resolve()))
    outer = os.path.normcase(str(root.resolve())).rstrip(os.sep)
    return inner != outer and inner.startswith(outer + os.sep)


def _ignored_in(checkout: Path, path: Path) -> bool:
    """Does the checkout ``checkout`` ignore the directory ``path`` below it
    (``git check-ignore --no-index``: its ``.gitignore`` files and ``info/exclude``)?"""
    relative = os.path.relpath(path.resolve(), checkout.resolve())
    from detente.vcs.git import Git

    result = Git(checkout).run(
        "check-ignore", "-q", "--no-index", "--", relative + "/", check=False
    )
    return result.returncode == 0


def _protected_branches(repo: RepoConfig) -> set[str]:
    """The default branch, and every ``detente.protectedRef`` under ``refs/heads/``."""
    found = {repo.default_branch}
    if repo.path is not None:
        from detente.vcs.git import Git

        out = Git(repo.path).run("config", "--get-all", "detente.protectedRef", check=False)
        found |= {
            ref.removeprefix("refs/heads/")
            for ref in out.stdout.split()
            if ref.startswith("refs/heads/")
        }
    return found


def _same_branch(repo: RepoConfig, name: str, names: set[str]) -> bool:
    """Is ``name`` one of ``names`` (case-folded where the repository ignores case)?"""
    if repo.case_insensitive:
        return name.casefold() in {n.casefold() for n in names}
    return name in names


def placed(placement: Placement | None, start: str, command: Callable[[], T]) -> T:
    """Run ``command`` with the worktree of ``placement`` created at ``start`` first.

    Args:
        placement: from :func:`plan_worktree`; None runs ``command`` alone.
        start: the full OID the worktree's HEAD starts at (the claim's base commit, or a
            takeover predecessor's head).
        command: the command that records the claim.

    Returns:
        What ``command`` returned.

    Raises:
        ValidationError: ``validation_error`` (field ``worktree``: the directory exists and
            is not empty, or cannot be made; ``baseCommit``: ``start`` names no commit):
            nothing was recorded.
        BranchInUse: ``branch_in_use``: the branch is checked out in another worktree
            (``holder`` names it): nothing was recorded.
        StaleBase: ``stale_base``: the branch exists at another commit: nothing recorded.
        VcsError: ``vcs_error``: git refused otherwise: nothing was recorded.
        DetenteError: whatever ``command`` raised; the worktree and the branch it made
            were removed first.
    """
    if placement is None:
        return command()
    from detente.vcs.worktrees import create_worktree, discard_worktree

    try:
        created = create_worktree(placement.repo, placement.path, placement.branch, start)
    except ValidationError as exc:
        if exc.field != "path":
            raise
        # The body's field is ``worktree``: name it, as the CLI's --worktree-dir does.
        extra = {k: v for k, v in exc.extra.items() if k != "field"}
        raise ValidationError(exc.detail, field="worktree", **extra) from None
    try:
        return command()
    except BaseException:
        discard_worktree(placement.repo, created)
        raise
