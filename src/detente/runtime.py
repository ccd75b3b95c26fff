"""Wire a :class:`~detente.service.Service` to real repositories and a store.

Whoever needs a service of its own (``detente serve`` through :mod:`detente.server`,
the client's local mode, the demo) builds it here, so the defaults live in one place:

- each repository is opened with :func:`~detente.vcs.open_repo` and registered under its
  directory name (or the name given);
- the store URL is the argument, else ``$DETENTE_STORE``, else
  ``sqlite:///<common git dir>/detente/detente.db`` of the *first* repository, so every
  worktree of one repository (the main checkout and every claim worktree) shares one
  database;
- base commits are validated against the real repository with
  :func:`~detente.vcs.resolve_commit`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from detente.clock import Clock
from detente.errors import ValidationError
from detente.service import RepoConfig, Service
from detente.storage.clock import default_clock
from detente.storage.factory import open_store
from detente.vcs import RepoInfo, default_store_path, open_repo, resolve_commit

__all__ = ["build_service", "default_store_url", "resolve_store_url"]

#: The environment variable naming the store URL when no ``--store`` is given.
STORE_ENV = "DETENTE_STORE"


def default_store_url(repo: Path) -> str:
    """The default store of ``repo``: its SQLite file under git's common directory.

    Args:
        repo: a directory inside any working tree of the repository.

    Returns:
        ``sqlite:///<abs path>`` (four slashes in total, the path being absolute).

    Raises:
        VcsError: ``vcs_error`` when ``repo`` is not inside a git repository.
    """
    return f"sqlite:///{default_store_path(repo)}"


def resolve_store_url(first_repo: Path, store_url: str | None = None) -> str:
    """The store URL :func:`build_service` uses: the argument, ``$DETENTE_STORE``, the default.

    Args:
        first_repo: a directory inside the first repository served.
        store_url: an explicit URL, or None.

    Returns:
        The URL.
    """
    return store_url or os.environ.get(STORE_ENV) or default_store_url(first_repo)


def build_service(
    repo_paths: Sequence[Path],
    *,
    names: Sequence[str | None] = (),
    store_url: str | None = None,
    clock: Clock | None = None,
    opened: Sequence[RepoInfo] = (),
) -> Service:
    """Open the repositories and the store, and build the service over them.

    Args:
        repo_paths: one directory inside each repository to coordinate (at least one).
        names: display names, positionally matching ``repo_paths``; a missing or None
            entry means the main worktree's directory name.
        store_url: ``sqlite:///path`` or ``memory://``; default ``$DETENTE_STORE``, else the
            first repository's default SQLite file (see the module docstring).
        clock: the time authority; default the system clock.
        opened: repositories the caller already opened with
            :func:`~detente.vcs.open_repo`, positionally matching ``repo_paths`` (each
            saves its git calls; a CLI process opens its repository once).

    Returns:
        The service (its store is open; call ``service.store.close()`` when done).

    Raises:
        ValidationError: ``validation_error`` when no repository is given, a path is not a
            git working tree, two repositories get the same name, or the store URL is bad.
        NotFoundError: ``not_found`` when a repository path does not exist.
        StoreError: ``store_unavailable`` when the store cannot be opened.
    """
    if not repo_paths:
        raise ValidationError("at least one repository is needed", field="repo")
    if len(names) > len(repo_paths):
        raise ValidationError("more names than repositories", field="name")
    configs: list[RepoConfig] = []
    infos: list[RepoInfo] = []
    for i, path in enumerate(repo_paths):
        name = names[i] if i < len(names) else None
        reuse = i < len(opened) and name in (None, opened[i].name)
        info = opened[i] if reuse else open_repo(Path(path), name)
        infos.append(info)
        if any(c.name == info.name for c in configs):
            raise ValidationError(
                f"two repositories are named {info.name!r}; give one another name",
                field="name",
            )
        configs.append(RepoConfig(info.name, info.path, info.default_branch, info.case_insensitive))
    default = f"sqlite:///{infos[0].common_dir / 'detente' / 'detente.db'}"
    store = open_store(store_url or os.environ.get(STORE_ENV) or default)
    # Multi-node stores (PostgreSQL, etcd) are the lease-time authority: servers with
    # skewed machine clocks then agree on every deadline (detente.storage.clock).
    return Service(store, clock or default_clock(store), configs, resolve_commit=resolve_commit)
