"""Facts about one git repository: where it lives, its default branch, commit lookups.

All functions accept any directory inside a working tree of the repository (the main
worktree, a linked worktree, or a subdirectory of either).
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from detente.errors import NotFoundError, ValidationError
from detente.vcs.discover import find_layout
from detente.vcs.git import Git

__all__ = [
    "RepoInfo",
    "current_oid",
    "default_store_path",
    "is_ancestor",
    "open_repo",
    "resolve_commit",
]

_FALLBACK_DEFAULT_BRANCH = "main"


class RepoInfo:
    """A git repository as detente sees it.

    Attributes:
        name: display name (see :func:`open_repo`).
        path: top level of the working tree that was opened (absolute, symlinks resolved).
        common_dir: absolute git directory shared by all worktrees (``.git`` of the main
            worktree, or the bare repository).
        default_branch: branch checked out in the main worktree; ``"main"`` when the main
            worktree's HEAD is detached.
        main_worktree: top level of the main worktree (where the project's ``detente.toml``
            lives), the same from every linked worktree.
        case_insensitive: value of ``core.ignorecase`` (False when unset); read on first
            use (one git process), as ``head_oid`` is.
        head_oid: full OID of the opened worktree's HEAD commit when it was first read;
            None on an unborn branch.
    """

    # A plain immutable class rather than a frozen dataclass: a hook call that only asks
    # a server loads no ``dataclasses`` (docs/performance.md, "Hook calls without
    # generated classes").

    name: str
    path: Path
    common_dir: Path
    default_branch: str
    main_worktree: Path | None

    def __init__(
        self,
        name: str,
        path: Path,
        common_dir: Path,
        default_branch: str,
        main_worktree: Path | None = None,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "name", name)
        set_field(self, "path", path)
        set_field(self, "common_dir", common_dir)
        set_field(self, "default_branch", default_branch)
        set_field(self, "main_worktree", main_worktree)

    def _fields(self) -> tuple[object, ...]:
        return (self.name, self.path, self.common_dir, self.default_branch, self.main_worktree)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"RepoInfo is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"RepoInfo is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RepoInfo) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"RepoInfo(name={self.name!r}, path={self.path!r}, common_dir={self.common_dir!r}, "
            f"default_branch={self.default_branch!r}, main_worktree={self.main_worktree!r})"
        )

    @cached_property
    def case_insensitive(self) -> bool:
        """``core.ignorecase`` (False when unset)."""
        return _config_bool(Git(self.path), "core.ignorecase")

    @cached_property
    def head_oid(self) -> str | None:
        """The worktree's HEAD commit; None on an unborn branch."""
        return _verify(Git(self.path), "HEAD^{commit}")


def open_repo(path: Path, name: str | None = None) -> RepoInfo:
    """Describe the git repository containing ``path``.

    Args:
        path: a directory inside a working tree.
        name: display name; defaults to the directory name of the main worktree (which is
            the top-level directory name when ``path`` is in the main worktree, and stays
            the same when opened from a linked worktree). A ``.git`` suffix is dropped.

    Returns:
        The :class:`RepoInfo`.

    Raises:
        NotFoundError: ``not_found`` when ``path`` does not exist.
        ValidationError: ``validation_error`` (field ``path``) when ``path`` is not a
            directory, not inside a git repository, or inside a bare repository / a
            ``.git`` directory rather than a working tree.
        VcsError: ``vcs_error`` when git fails for another reason (e.g. unsafe ownership).
    """
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"repository path {path} does not exist", path=str(path))
    if not path.is_dir():
        raise ValidationError(f"repository path {path} is not a directory", field="path")
    git = Git(path)
    layout = find_layout(path)  # the plain layouts, read without a git process
    if layout is not None:
        toplevel, common_dir, main = layout
    else:
        toplevel, common_dir = _work_tree(git, path)
        main = _main_worktree_path(git, common_dir, toplevel)
    if name is None:
        name = main.name.removesuffix(".git") or toplevel.name
    return RepoInfo(
        name=name,
        path=toplevel,
        common_dir=common_dir,
        default_branch=_main_worktree_branch(git, common_dir),
        main_worktree=main,
    )


def _work_tree(git: Git, path: Path) -> tuple[Path, Path]:
    """``(top level, common dir)`` of the working tree at ``path``, or the error saying
    why it is not one."""
    # One git call answers the common case; any surprise takes the slow path, which tells
    # the errors apart.
    fast = git.run(
        "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--git-common-dir", check=False
    )
    lines = fast.stdout.splitlines()
    if fast.returncode == 0 and len(lines) == 3 and lines[0] == "true":
        return Path(lines[1]), _absolute(git, lines[2])
    inside = git.run("rev-parse", "--is-inside-work-tree", check=False)
    if inside.returncode != 0:
        if "not a git repository" in inside.stderr:
            raise ValidationError(
                f"{path} is not inside a git repository (run `git init` first)", field="path"
            )
        raise inside.error()
    if inside.stdout.strip() != "true":
        raise ValidationError(
            f"{path} is not inside a git working tree (a bare repository or a .git "
            "directory); detente needs a working tree",
            field="path",
        )
    return Path(git.text("rev-parse", "--show-toplevel")), _common_dir(git)


def resolve_commit(repo: Path, rev: str, *, field: str = "baseCommit") -> str:
    """Resolve ``rev`` to the full OID of a commit, once, now.

    Args:
        repo: a directory inside a working tree of the repository.
        rev: any revision git understands (full or abbreviated OID, branch, tag, ``HEAD``).
        field: the input field named in a ``ValidationError``.

    Returns:
        The full hex OID (40 characters for SHA-1, 64 for SHA-256 repositories).

    Raises:
        ValidationError: ``validation_error`` (``field``, default ``baseCommit``) when
            ``rev`` is empty, looks like an option, is unknown or is not a commit.
        VcsError: ``vcs_error`` when git fails otherwise (e.g. not a repository).
    """
    _check_rev(rev, field)
    oid = _verify(Git(repo), f"{rev}^{{commit}}")
    if oid is None:
        raise ValidationError(f"unknown commit {rev!r} in {repo}", field=field, value=rev)
    return oid


def current_oid(repo: Path, ref: str) -> str | None:
    """The OID ``ref`` points to now (tags are not peeled), or None if it does not exist.

    Args:
        repo: a directory inside a working tree of the repository.
        ref: a ref name, e.g. ``refs/heads/main``, ``main`` or ``HEAD``.

    Returns:
        The full hex OID, or None when the ref does not exist (or HEAD is unborn).

    Raises:
        ValidationError: ``validation_error`` (field ``ref``) when ``ref`` is empty or
            looks like an option.
        VcsError: ``vcs_error`` when git fails otherwise.
    """
    _check_rev(ref, "ref")
    return _verify(Git(repo), ref)


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    """Whether ``ancestor`` is reachable from ``descendant`` (a commit is its own ancestor).

    Args:
        repo: a directory inside a working tree of the repository.
        ancestor: a revision.
        descendant: a revision.

    Returns:
        True if ``ancestor`` is an ancestor of (or equal to) ``descendant``.

    Raises:
        ValidationError: ``validation_error`` (field ``ancestor`` or ``descendant``) when
            a revision is unknown.
        VcsError: ``vcs_error`` when git fails otherwise.
    """
    _check_rev(ancestor, "ancestor")
    _check_rev(descendant, "descendant")
    git = Git(repo)
    result = git.run(
        "merge-base", "--is-ancestor", "--end-of-options", ancestor, descendant, check=False
    )
    if result.returncode in (0, 1):
        return result.returncode == 0
    # Turn "not a valid commit name" into a ValidationError naming the culprit.
    resolve_commit(repo, ancestor, field="ancestor")
    resolve_commit(repo, descendant, field="descendant")
    raise result.error()


def default_store_path(repo: Path) -> Path:
    """Where detente keeps its SQLite database for ``repo``: ``<common dir>/detente/detente.db``.

    The path is under the *common* git directory, so every worktree of one repository
    (the main checkout and every claim worktree) resolves to the same database, and it is
    never part of any working tree (nothing to ignore, nothing committed by accident).
    The directory is not created.

    Args:
        repo: a directory inside any working tree of the repository.

    Returns:
        The absolute database path.

    Raises:
        VcsError: ``vcs_error`` when ``repo`` is not inside a git repository.
    """
    return _common_dir(Git(repo)) / "detente" / "detente.db"


def principals_path(repo: Path) -> Path:
    """The key registry of ``repo``: ``principals.json`` beside its default database.

    The one place the registry's path is spelled: ``detente principal`` (the CLI),
    ``detente serve --auth keys`` and the registry's use cases (the service) all read it
    here. The directory is not created.

    Raises:
        VcsError: ``vcs_error`` when ``repo`` is not inside a git repository.
    """
    return default_store_path(repo).parent / "principals.json"


def _check_rev(rev: str, field: str) -> None:
    if not rev or rev.startswith("-") or "\0" in rev or "\n" in rev:
        raise ValidationError(f"invalid revision {rev!r}", field=field, value=rev)


def _verify(git: Git, rev: str) -> str | None:
    """``git rev-parse --verify`` with None for "no such object"."""
    result = git.run("rev-parse", "--verify", "--quiet", "--end-of-options", rev, check=False)
    if result.returncode == 0:
        return result.stdout.strip()
    if result.returncode == 1:
        return None
    raise result.error()


def _common_dir(git: Git) -> Path:
    return _absolute(git, git.text("rev-parse", "--git-common-dir"))


def _absolute(git: Git, printed: str) -> Path:
    common = Path(printed)
    # git prints it relative to the working directory when it can.
    return (common if common.is_absolute() else git.cwd / common).resolve()


def _main_worktree_branch(git: Git, common_dir: Path) -> str:
    # The common dir's HEAD is the main worktree's HEAD, whichever worktree we are in. The
    # files backend keeps it as ``ref: refs/heads/B``: read without a git process. Anything
    # else (detached, the reftable backend's placeholder, unreadable) asks git.
    try:
        text = (common_dir / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    branch = text.removeprefix("ref: refs/heads/") if text.startswith("ref: refs/heads/") else ""
    if branch and branch != ".invalid" and "\n" not in branch:
        return branch
    result = git.run(
        "--git-dir", str(common_dir), "symbolic-ref", "--quiet", "--short", "HEAD", check=False
    )
    if result.returncode == 0 and result.stdout.strip():
        return result.stdout.strip()
    if result.returncode in (0, 1):  # 1: detached HEAD
        return _FALLBACK_DEFAULT_BRANCH
    raise result.error()


def _main_worktree_path(git: Git, common_dir: Path, fallback: Path) -> Path:
    # git names the main worktree after the common dir's real path, less a ``/.git`` suffix
    # (worktree.c, get_main_worktree): with that suffix no ``git worktree list`` is needed.
    if common_dir.name == ".git":
        return common_dir.parent
    out = git.run("worktree", "list", "--porcelain", "-z", check=False)
    first = out.stdout.split("\0", 1)[0]
    if out.returncode == 0 and first.startswith("worktree "):
        return Path(first.removeprefix("worktree "))
    return fallback


def _config_bool(git: Git, key: str) -> bool:
    result = git.run("config", "--type=bool", "--get", key, check=False)
    if result.returncode == 1:  # unset
        return False
    return result.check_returncode().stdout.strip() == "true"
