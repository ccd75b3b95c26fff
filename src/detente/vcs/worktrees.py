"""Claim worktrees: one git worktree and topic branch per claim.

What changed in a worktree lives in :mod:`detente.vcs.changes` (re-exported here).

Requires git >= 2.36 (``worktree list --porcelain -z`` and ``worktree add --lock --reason``).
"""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from detente.errors import BranchInUse, NotFoundError, StaleBase, ValidationError, VcsError
from detente.vcs.changes import DiffSummary, changed_files, diff_summary, status_entries
from detente.vcs.git import Git
from detente.vcs.repo import resolve_commit

__all__ = [
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
    "same_path",
    "slugify",
]

_HEX_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_NON_SLUG = re.compile(r"[^a-z0-9]+")
#: The shape :func:`claim_branch_name` makes: valid for git by construction.
_CLAIM_BRANCH = re.compile(r"claim/[a-z0-9]+(?:-[a-z0-9]+)*")
_SHORT_ID_LEN = 8
_FALLBACK_SLUG = "untitled"


@dataclass(frozen=True)
class Worktree:
    """A claim worktree just created.

    Attributes:
        path: absolute path of the worktree (symlinks resolved).
        branch: short branch name checked out in it, e.g. ``claim/fix-retry-01hx2k3m``.
        base_oid: the commit it was created from.
        head_oid: its HEAD right after creation (always equal to ``base_oid``).
        new_branch: the branch was created for it (False: an existing branch was
            attached); :func:`discard_worktree` deletes only a new branch.
        made_dirs: the missing parent directories git made for it, innermost first
            (:func:`discard_worktree` removes them when empty).
    """

    path: Path
    branch: str
    base_oid: str
    head_oid: str
    new_branch: bool = True
    made_dirs: tuple[Path, ...] = ()


@dataclass(frozen=True)
class WorktreeEntry:
    """One entry of ``git worktree list --porcelain``.

    Attributes:
        path: the worktree's path as git records it.
        head: HEAD's OID; None for a bare entry or an unborn branch.
        branch: short branch name; None when detached or bare.
        locked: the lock reason (``""`` when locked without a reason); None when unlocked.
        prunable: git considers the entry stale (its directory is gone).
        bare: the entry is a bare repository (only ever the first entry).
    """

    path: Path
    head: str | None
    branch: str | None
    locked: str | None
    prunable: bool
    bare: bool = False


def slugify(objective_or_name: str, max_len: int = 40) -> str:
    """Turn free text into a short branch-name-safe slug.

    Accents are stripped (``é`` -> ``e``), everything else that is not an ASCII letter or
    digit becomes a single ``-``. A slug longer than ``max_len`` is cut at the last ``-``
    inside the limit when that keeps at least half of it, else hard-cut.

    Args:
        objective_or_name: any text, e.g. ``"Fix retry in settlement!"``.
        max_len: maximum length in characters (>= 1).

    Returns:
        e.g. ``"fix-retry-in-settlement"``; ``"untitled"`` (cut to ``max_len``) when
        nothing ASCII survives.

    Raises:
        ValidationError: ``validation_error`` (field ``maxLen``) when ``max_len < 1``.
    """
    if max_len < 1:
        raise ValidationError(f"max_len must be at least 1, got {max_len}", field="maxLen")
    ascii_text = unicodedata.normalize("NFKD", objective_or_name).encode("ascii", "ignore").decode()
    slug = _NON_SLUG.sub("-", ascii_text.lower()).strip("-")
    if len(slug) > max_len:
        cut = slug[:max_len]
        boundary = cut.rfind("-")
        if slug[max_len] == "-":
            boundary = max_len
        slug = cut[:boundary] if boundary >= max_len // 2 else cut
        slug = slug.strip("-")
    return slug or _FALLBACK_SLUG[:max_len]


def claim_branch_name(slug: str, claim_id: str) -> str:
    """The topic branch of a claim: ``claim/<slug>-<short id>``.

    The short id is the last 8 alphanumeric characters of ``claim_id``, lowercased: the
    random tail of a ``clm_<hex>`` id (or ULID/UUID), so two claims with the same
    objective get distinct branches.

    Args:
        slug: usually ``slugify(objective)``; may be empty (then ``claim/<short id>``).
        claim_id: the claim's id.

    Returns:
        A branch name valid for ``git check-ref-format --branch``.

    Raises:
        ValidationError: ``validation_error`` (field ``claimId``) when the id has no
            alphanumeric character, or (field ``branch``) when the result is not a valid
            branch name.
        VcsError: ``vcs_error`` when git cannot be run.
    """
    alnum = "".join(ch for ch in claim_id.lower() if ch.isascii() and ch.isalnum())
    if not alnum:
        raise ValidationError(f"claim id {claim_id!r} has no usable characters", field="claimId")
    short = alnum[-_SHORT_ID_LEN:]
    branch = f"claim/{slug}-{short}" if slug else f"claim/{short}"
    if not _CLAIM_BRANCH.fullmatch(branch):  # a slug not made by slugify: ask git
        _check_branch_name(branch)
    return branch


def create_worktree(repo: Path, path: Path, branch: str, base_oid: str) -> Worktree:
    """Create a locked worktree at ``path`` on ``branch`` whose HEAD is exactly ``base_oid``.

    The start point is the explicit OID, never ``HEAD``, so whatever the main checkout or
    other agents do meanwhile cannot change what the claim starts from. If ``branch``
    already exists and is free, it is attached only when its tip is ``base_oid``. The
    worktree is locked with reason ``detente claim <branch>`` so ``git worktree prune``
    leaves it alone. When it raises ``ValidationError``, ``BranchInUse`` or ``StaleBase``
    nothing was created (no directory, no worktree entry, no branch).

    Each fact is checked once, by the git call that needs it: the happy path is three git
    processes (``update-ref`` creating the branch at ``base_oid`` only if it does not
    exist, which refuses an unknown base; ``worktree add``; one ``rev-parse HEAD`` in the
    new worktree); the lookups that tell refusals apart run only after git refused. A
    branch name of the shape :func:`claim_branch_name` makes is valid by construction
    and is not sent to ``git check-ref-format``.

    Args:
        repo: a directory inside any working tree of the repository.
        path: where to create the worktree; must not exist or be an empty directory.
            Relative paths are relative to the process's current directory.
        branch: short branch name, e.g. from :func:`claim_branch_name`.
        base_oid: full hex OID of the base commit (resolve revisions first with
            :func:`~detente.vcs.repo.resolve_commit`).

    Returns:
        The :class:`Worktree` (``new_branch`` says whether the branch was made for it).

    Raises:
        ValidationError: ``validation_error`` with field ``baseCommit`` (not a full OID of
            an existing commit), ``branch`` (invalid name) or ``path`` (exists and is not
            an empty directory, or cannot be created: the detail names the OS's reason).
        BranchInUse: ``branch_in_use`` when ``branch`` is checked out in another worktree;
            the detail and the ``holder`` field name that worktree's path.
        StaleBase: ``stale_base`` when ``branch`` exists, is not checked out anywhere, but
            its tip is not ``base_oid`` (``expected``/``actual`` carry both OIDs).
        VcsError: ``vcs_error`` when git fails for another reason.
    """
    if not _HEX_OID.fullmatch(base_oid):
        raise ValidationError(
            f"base commit must be a full lowercase hex OID, got {base_oid!r}",
            field="baseCommit",
            value=base_oid,
        )
    if not _CLAIM_BRANCH.fullmatch(branch):
        _check_branch_name(branch)
    path = Path(path).absolute()
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise ValidationError(
            f"worktree path {path} already exists and is not an empty directory", field="path"
        )
    made_dirs = tuple(_missing_parents(path))
    git = Git(repo)
    ref = f"refs/heads/{branch}"
    # The branch first, by compare-and-swap from "absent": git leaves a branch behind when
    # ``worktree add -b`` fails after making it, and could not say whether it made it.
    made = git.run("update-ref", "-m", f"detente: claim {branch}", ref, base_oid, "", check=False)
    new_branch = made.ok
    if not new_branch:
        tip = _branch_tip(git, branch)
        if tip is None:
            resolve_commit(repo, base_oid)  # ValidationError (baseCommit) when unknown
            raise made.error()
        _ensure_attachable(git, branch, tip, base_oid)
    add = ("worktree", "add", "--lock", "--reason", f"detente claim {branch}")
    result = git.run(*add, "--", str(path), branch, check=False)
    if not result.ok:
        if new_branch:
            git.run("update-ref", "-d", ref, base_oid, check=False)
        else:
            _ensure_attachable(git, branch, _branch_tip(git, branch), base_oid)
        _check_creatable(path)  # ValidationError (path) when no directory can be made
        raise result.error()
    head = Git(path).text("rev-parse", "--verify", "HEAD")
    worktree = Worktree(
        path=path.resolve(),
        branch=branch,
        base_oid=base_oid,
        head_oid=head,
        new_branch=new_branch,
        made_dirs=made_dirs,
    )
    if head != base_oid:  # cannot happen unless a hook moved HEAD; never hand that out
        discard_worktree(repo, worktree)
        raise VcsError(f"new worktree {path} is at {head}, expected base commit {base_oid}")
    return worktree


def discard_worktree(repo: Path, worktree: Worktree) -> None:
    """Undo :func:`create_worktree`: remove the worktree (directory and entry, whatever
    it holds) and, when it made the branch, delete the branch if it still points at the
    base commit (a branch that moved holds someone's commits and is kept).

    The parent directories git made for it go too, when empty. Best effort: what cannot
    be removed is left (the failure that asked for the undo is the one to report).

    Args:
        repo: a directory inside any working tree of the repository.
        worktree: what :func:`create_worktree` returned.
    """
    git = Git(repo)
    # A locked worktree needs --force twice.
    git.run("worktree", "remove", "--force", "--force", "--", str(worktree.path), check=False)
    if worktree.new_branch:
        ref = f"refs/heads/{worktree.branch}"
        git.run("update-ref", "-d", ref, worktree.base_oid, check=False)
    for directory in worktree.made_dirs:
        with contextlib.suppress(OSError):  # not empty (someone else's): leave it
            directory.rmdir()


def default_worktree_path(main_worktree: Path, branch: str) -> Path:
    """Where a claim's worktree goes unless the caller names a place:
    ``<main worktree>/../<main worktree's name>.worktrees/<branch without claim/>``.

    Args:
        main_worktree: top level of the repository's main worktree.
        branch: the claim's branch, e.g. ``claim/fix-retry-1a2b3c4d``.

    Returns:
        The absolute path (not created).
    """
    main = main_worktree.absolute()
    tail = branch.removeprefix("claim/").replace("/", "-")
    return main.parent / f"{main.name}.worktrees" / tail


def list_worktrees(repo: Path) -> list[WorktreeEntry]:
    """All worktrees of the repository, main worktree first.

    Args:
        repo: a directory inside any working tree of the repository.

    Returns:
        One :class:`WorktreeEntry` per worktree, in git's order.

    Raises:
        VcsError: ``vcs_error`` when git fails.
    """
    out = Git(repo).run("worktree", "list", "--porcelain", "-z").stdout
    entries: list[WorktreeEntry] = []
    # Records are NUL-terminated attribute lists separated by an empty attribute.
    for record in out.split("\0\0"):
        attrs = [a for a in record.split("\0") if a]
        if not attrs:
            continue
        fields: dict[str, str] = {}
        for attr in attrs:
            key, _, value = attr.partition(" ")
            fields[key] = value
        head = fields.get("HEAD")
        branch = fields.get("branch")
        entries.append(
            WorktreeEntry(
                path=Path(fields.get("worktree", "")),
                head=None if head is None or set(head) == {"0"} else head,
                branch=branch.removeprefix("refs/heads/") if branch is not None else None,
                locked=fields.get("locked"),
                prunable="prunable" in fields,
                bare="bare" in fields,
            )
        )
    return entries


def remove_worktree(repo: Path, path: Path, *, force: bool = False) -> None:
    """Unlock and remove one worktree entry (its directory and admin files).

    Only that entry is touched; the branch is kept (it holds the claim's commits). A
    worktree whose directory has already vanished is removed from git's list too.

    Args:
        repo: a directory inside any working tree of the repository.
        path: the worktree to remove.
        force: remove even with uncommitted changes or untracked files (ignored files
            never block removal).

    Raises:
        NotFoundError: ``not_found`` when ``path`` is not a worktree of the repository.
        ValidationError: ``validation_error`` (field ``path``) for the main worktree.
        VcsError: ``vcs_error`` when the worktree has uncommitted changes and ``force``
            is False (it stays locked and untouched), or git fails.
    """
    entries = list_worktrees(repo)
    target = _same_path_key(Path(path))
    index = next((i for i, e in enumerate(entries) if _same_path_key(e.path) == target), None)
    if index is None:
        raise NotFoundError(f"{path} is not a worktree of this repository", path=str(path))
    if index == 0:
        raise ValidationError(f"{path} is the main worktree; it cannot be removed", field="path")
    entry = entries[index]
    if not force and entry.path.is_dir():
        dirty = _dirty_paths(Git(entry.path))
        if dirty:
            shown = ", ".join(dirty[:5]) + (", ..." if len(dirty) > 5 else "")
            raise VcsError(
                f"worktree {entry.path} has uncommitted changes ({shown}); commit them or "
                "remove with force",
                path=str(entry.path),
                files=dirty,
            )
    git = Git(repo)
    if entry.locked is not None:
        git.run("worktree", "unlock", "--", str(entry.path))
    force_args = ["--force"] if force else []
    result = git.run("worktree", "remove", *force_args, "--", str(entry.path), check=False)
    if not result.ok:
        if entry.locked is not None:  # put the lock back: a failed removal changes nothing
            relock = ("worktree", "lock", "--reason", entry.locked, "--", str(entry.path))
            git.run(*relock, check=False)
        raise result.error()


def _dirty_paths(git: Git) -> list[str]:
    out = git.run("status", "--porcelain", "-z", "--untracked-files=normal").stdout
    return [path for _, path, _ in status_entries(out)]


def _branch_tip(git: Git, branch: str) -> str | None:
    ref = f"refs/heads/{branch}"
    result = git.run("rev-parse", "--verify", "--quiet", "--end-of-options", ref, check=False)
    if result.returncode == 0:
        return result.stdout.strip()
    if result.returncode == 1:
        return None
    raise result.error()


def _ensure_attachable(git: Git, branch: str, tip: str | None, base_oid: str) -> None:
    """Raise BranchInUse/StaleBase if ``branch`` cannot be checked out at ``base_oid``."""
    for entry in list_worktrees(git.cwd):
        if entry.branch == branch:
            raise BranchInUse(
                f"branch {branch!r} is already checked out in the worktree at {entry.path}",
                holder=str(entry.path),
                branch=branch,
            )
    if tip is not None and tip != base_oid:
        raise StaleBase(
            f"branch {branch!r} already exists at {tip}, not at the requested base commit "
            f"{base_oid}; choose another branch name or base the claim on {tip}",
            branch=branch,
            expected=base_oid,
            actual=tip,
        )


def _missing_parents(path: Path) -> list[Path]:
    """The parent directories of ``path`` that do not exist yet, innermost first."""
    missing: list[Path] = []
    probe = path.parent
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    return missing


def _check_creatable(path: Path) -> None:
    """Create ``path`` (and its missing parents) and remove what was created: whether the
    worktree could be made there. Permission bits alone cannot tell (root may write
    anywhere, yet not under ``/proc``), so the directory is really made. Asked only after
    git refused, to name the reason.

    Raises:
        ValidationError: ``validation_error`` (field ``path``) naming the OS's reason.
    """
    missing: list[Path] = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    try:
        for directory in reversed(missing):
            directory.mkdir()
    except OSError as exc:
        raise ValidationError(
            f"cannot create the worktree directory {path}: {exc.strerror or exc}",
            field="path",
        ) from None
    finally:
        for directory in missing:
            # not created (the mkdir above failed first) or no longer empty: leave it
            with contextlib.suppress(OSError):
                directory.rmdir()


def _check_branch_name(branch: str) -> None:
    if not branch or branch.startswith("-") or "\0" in branch:
        raise ValidationError(f"{branch!r} is not a valid branch name", field="branch")
    # Outside any repository, so "@{-1}"-style shorthands cannot expand.
    result = Git(Path(os.path.abspath(os.sep))).run(
        "check-ref-format", "--branch", branch, check=False
    )
    if result.returncode != 0 or result.stdout.strip() != branch:
        raise ValidationError(f"{branch!r} is not a valid branch name", field="branch")


def _same_path_key(path: Path) -> str:
    return os.path.normcase(str(path.resolve() if path.exists() else path.absolute()))


def same_path(a: Path, b: Path) -> bool:
    """Do ``a`` and ``b`` name one directory (symlinks resolved where they exist, case
    folded where the platform ignores it)?"""
    return _same_path_key(a) == _same_path_key(b)
