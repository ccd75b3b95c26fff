"""What git is committing or receiving, read from inside a hook with git's own environment.

git runs a hook with the variables that say *which* index, repository and objects the
operation uses: ``git commit -a``, ``git commit -- <paths>`` and ``git commit -i`` point
``GIT_INDEX_FILE`` at a temporary index (the real one does not hold what is being
committed); a push's ``pre-receive`` sees the pushed objects only through the quarantine
(``GIT_OBJECT_DIRECTORY``, ``GIT_ALTERNATE_OBJECT_DIRECTORIES``, ``GIT_QUARANTINE_PATH``);
``git --git-dir=X --work-tree=Y`` passes ``GIT_DIR``/``GIT_WORK_TREE``. The
:class:`~detente.vcs.git.Git` wrapper drops all of them by default (a detente command must
not operate on a repository it inherited by accident), so every git call a hook makes goes
through :class:`HookRepo`, which passes them back (relative paths made absolute against the
directory git started the hook in).

Every read here is a query: nothing takes a ref lock, so a ``reference-transaction`` hook
may call it while git holds the locks of the transaction without deadlocking or recursing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from detente.vcs.git import REPO_LOCAL_ENV, Git
from detente.vcs.refs import TRAILER, ZERO_OID

__all__ = ["HookCommit", "HookRepo", "hook_environment"]


# Variables holding one path (made absolute); the others are kept verbatim.
_PATH_VARS = frozenset(
    {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"}
)
# The hook's GIT_PREFIX describes where the user stood; it locates nothing for a query.
_NOT_KEPT = frozenset({"GIT_PREFIX"})


def hook_environment(environ: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """The repository variables git gave the hook, path variables made absolute.

    Args:
        environ: the hook's environment (``os.environ``).
        cwd: the directory git started the hook in (relative values are relative to it).

    Returns:
        ``{name: value}`` for every variable of :data:`~detente.vcs.git.REPO_LOCAL_ENV` that
        is set (``GIT_PREFIX`` excepted).
    """
    kept: dict[str, str] = {}
    for name in REPO_LOCAL_ENV:
        value = environ.get(name)
        if value is None or name in _NOT_KEPT:
            continue
        if name in _PATH_VARS and value and not os.path.isabs(value):
            value = os.path.normpath(os.path.join(cwd, value))
        kept[name] = value
    return kept


@dataclass(frozen=True)
class HookCommit:
    """A commit an update adds, as the server-side check needs it.

    Attributes:
        oid: the commit's OID.
        claim_ids: values of its ``Detente-Claim:`` trailers, in order.
        files: paths it changes against its first parent (every path of a root commit).
    """

    oid: str
    claim_ids: tuple[str, ...]
    files: tuple[str, ...]
    #: ``(path, innermost symbols the change touches, lines outside every symbol
    #: changed)`` per changed file of a supported language (see
    #: :mod:`detente.hooks.symbol_edits`); empty: judged by whole files.
    edits: tuple[tuple[str, tuple[str, ...], bool], ...] = ()

    def to_wire(self) -> dict[str, object]:
        """``{oid, claimIds[], files[], edits[{path, symbols[], outside}]}`` (the
        ``pre-receive`` endpoint's commit shape; ``edits`` only when known)."""
        wire: dict[str, object] = {
            "oid": self.oid,
            "claimIds": list(self.claim_ids),
            "files": list(self.files),
        }
        if self.edits:
            wire["edits"] = [
                {"path": p, "symbols": list(s), "outside": o} for p, s, o in self.edits
            ]
        return wire


class HookRepo:
    """Queries on the repository a hook runs for, with the hook's git environment.

    Args:
        cwd: the directory git started the hook in (default: the current directory).
        environ: the hook's environment (default: ``os.environ``).
    """

    def __init__(self, cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> None:
        self.cwd = cwd or Path.cwd()
        self.git = Git(self.cwd, keep_env=hook_environment(environ or os.environ, self.cwd))

    def config(self, key: str) -> str | None:
        """The last value of ``git config key``, or None when unset."""
        found = self.config_all(key)
        return found[-1] if found else None

    def config_all(self, key: str) -> list[str]:
        """Every value of a multi-valued ``git config`` key, stripped, in order."""
        out = self.git.run("config", "--get-all", key, check=False)
        return [v.strip() for v in out.stdout.splitlines() if v.strip()] if out.ok else []

    def config_bool(self, key: str) -> bool:
        """``git config --type=bool key`` (False when unset or not a boolean)."""
        out = self.git.run("config", "--type=bool", "--get", key, check=False)
        return out.ok and out.stdout.strip() == "true"

    def head_ref(self) -> str | None:
        """The ref HEAD names (``refs/heads/main``), or None when HEAD is detached."""
        out = self.git.run("symbolic-ref", "--quiet", "HEAD", check=False)
        return out.stdout.strip() or None

    def common_dir(self) -> Path:
        """The repository's common git directory (absolute)."""
        found = Path(self.git.text("rev-parse", "--git-common-dir"))
        return found if found.is_absolute() else (self.cwd / found).resolve()

    def resolve(self, ref: str) -> str | None:
        """The OID ``ref`` points at now (before a transaction in progress), or None."""
        out = self.git.run("rev-parse", "--verify", "--quiet", "--end-of-options", ref, check=False)
        return out.stdout.strip() if out.ok and out.stdout.strip() else None

    def staged_paths(self) -> list[str]:
        """Paths the commit in progress changes: the index git is committing (its
        ``GIT_INDEX_FILE``) against HEAD; added, modified, deleted, renames as both."""
        out = self.git.run("diff", "--cached", "--name-only", "--no-renames", "-z")
        return [p for p in out.stdout.split("\0") if p]

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when ``ancestor`` is ``descendant`` or one of its ancestors.

        Raises:
            VcsError: ``vcs_error`` when git fails (an unknown object).
        """
        result = self.git.run("merge-base", "--is-ancestor", ancestor, descendant, check=False)
        if result.returncode not in (0, 1):
            raise result.error()
        return result.returncode == 0

    def added_commits(self, old: str, new: str, *, known: Sequence[str] = ()) -> list[HookCommit]:
        """Commits reachable from ``new`` but not from ``old``, oldest first, with their
        trailers and files. A new ref (``old`` the zero OID) adds the commits reachable
        from none of the ``known`` refs (none given: from no existing ref).

        Raises:
            VcsError: ``vcs_error`` when git fails (``new`` is not a commit).
        """
        if old != ZERO_OID:
            exclude = [f"^{old}"]
        else:
            exclude = ["--not", *known] if known else ["--not", "--all"]
        return self._log("--reverse", new, *exclude)

    def commit(self, oid: str) -> HookCommit:
        """One commit with its trailers and files.

        Raises:
            VcsError: ``vcs_error`` when ``oid`` is not a commit.
        """
        return self._log("-1", oid)[0]

    def _log(self, *args: str) -> list[HookCommit]:
        trailers = f"%(trailers:key={TRAILER},valueonly,separator=%x02)"
        out = self.git.run("log", f"--format=%H%x01%P%x01{trailers}%x00", *args, "--")
        commits: list[HookCommit] = []
        for record in out.stdout.split("\0"):
            record = record.strip("\n")
            if not record:
                continue
            oid, parents, values = record.split("\x01", 2)
            ids = tuple(v.strip() for v in values.split("\x02") if v.strip())
            commits.append(HookCommit(oid, ids, tuple(self._files(oid, parents.split()))))
        return commits

    def _files(self, oid: str, parents: list[str]) -> list[str]:
        if parents:
            args = ["diff-tree", "-r", "--name-only", "-z", "--no-renames", parents[0], oid]
            names = self.git.run(*args, "--").stdout.split("\0")
        else:
            args = ["diff-tree", "-r", "--root", "--name-only", "-z", "--no-renames", oid]
            names = self.git.run(*args, "--").stdout.split("\0")[1:]
        return sorted({p for p in names if p})
