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
  :func:`~detente.vcs.resolve_commit`;
- the policy is the ``detente.toml`` of the first repository's main worktree, so every
  worktree agrees (:mod:`detente.config`; ``detente serve`` applies its flags to it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from detente.clock import Clock
from detente.config import ProjectConfig, load_config
from detente.errors import ValidationError
from detente.service.core import RepoConfig, ServiceCore
from detente.storage.clock import default_clock
from detente.storage.factory import open_store
from detente.vcs import RepoInfo, default_store_path, open_repo, resolve_commit
from detente.vcs.commit_batch import CommitBatches

if TYPE_CHECKING:
    from detente.service import Service

__all__ = [
    "build_core",
    "build_service",
    "default_store_url",
    "load_project_config",
    "resolve_store_url",
]

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


def load_project_config(
    repo: Path,
    *,
    file: Path | None = None,
    overrides: Mapping[str, tuple[Any, str]] | None = None,
) -> ProjectConfig:
    """The configuration of the repository containing ``repo``.

    Args:
        repo: a directory inside any working tree of the repository.
        file: read this file instead of ``detente.toml`` (``--policy FILE``).
        overrides: command-line values, see :func:`detente.config.load_config`.

    Returns:
        Defaults, then the ``detente.toml`` at the top of the repository's *main*
        worktree (the same file from every claim worktree), then ``overrides``.

    Raises:
        ValidationError: ``validation_error`` for an invalid file or override, or when
            ``repo`` is not in a git working tree.
        NotFoundError: ``not_found`` when ``repo`` does not exist.
    """
    info = open_repo(Path(repo))
    return load_config(info.main_worktree or info.path, file=file, overrides=overrides)


def build_service(
    repo_paths: Sequence[Path],
    *,
    names: Sequence[str | None] = (),
    store_url: str | None = None,
    clock: Clock | None = None,
    config: ProjectConfig | None = None,
    config_file: Path | None = None,
    config_overrides: Mapping[str, tuple[Any, str]] | None = None,
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
        config: the configuration whose policy the service enforces; default the first
            repository's, as :func:`load_project_config` reads it with ``config_file``
            and ``config_overrides``.
        config_file: see :func:`load_project_config` (``file``).
        config_overrides: see :func:`load_project_config` (``overrides``).
        opened: repositories the caller already opened with
            :func:`~detente.vcs.open_repo`, positionally matching ``repo_paths`` (each
            saves its git calls; a CLI process opens its repository once).

    Returns:
        The service (its store is open; call ``service.store.close()`` when done).

    Raises:
        ValidationError: ``validation_error`` when no repository is given, a path is not a
            git working tree, two repositories get the same name, the store URL is bad, or
            the first repository's ``detente.toml`` is invalid.
        NotFoundError: ``not_found`` when a repository path does not exist.
        StoreError: ``store_unavailable`` when the store cannot be opened.
    """
    service = _build(
        repo_paths,
        names=names,
        store_url=store_url,
        clock=clock,
        config=config,
        config_file=config_file,
        config_overrides=config_overrides,
        opened=opened,
    )
    return cast("Service", service)


def _build(
    repo_paths: Sequence[Path],
    *,
    names: Sequence[str | None] = (),
    store_url: str | None = None,
    clock: Clock | None = None,
    config: ProjectConfig | None = None,
    config_file: Path | None = None,
    config_overrides: Mapping[str, tuple[Any, str]] | None = None,
    opened: Sequence[RepoInfo] = (),
    core_only: bool = False,
) -> ServiceCore:
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
        configs.append(
            RepoConfig(
                info.name,
                info.path,
                info.default_branch,
                info.case_insensitive,
                main_worktree=info.main_worktree,
            )
        )
    if config is None:
        first = infos[0]
        project_root = first.main_worktree or first.path
        config = load_config(project_root, file=config_file, overrides=config_overrides)
    configs = [replace(c, generated=config.generated, artifacts=config.artifacts) for c in configs]
    default = f"sqlite:///{infos[0].common_dir / 'detente' / 'detente.db'}"
    url = store_url or os.environ.get(STORE_ENV) or default
    store = open_store(url)
    # Multi-node stores (PostgreSQL, etcd) are the lease-time authority: servers with
    # skewed machine clocks then agree on every deadline (detente.storage.clock).
    kind: type[ServiceCore] = ServiceCore if core_only else _service_class()
    core = kind(
        store,
        clock or default_clock(store),
        configs,
        policy=config.policy,
        resolve_commit=resolve_commit,
        commit_check=CommitBatches().is_commit,
    )
    if not url.startswith("memory://"):  # a memory store forgets: nothing to anchor
        from detente.service.anchoring import anchor_for
        from detente.storage.factory import display_url

        core.anchor = anchor_for(infos[0].common_dir, infos[0].path, display_url(url))
    return core


def _service_class() -> type[Service]:
    from detente.service import Service

    return Service


def build_core(
    repo_paths: Sequence[Path],
    *,
    store_url: str | None = None,
    opened: Sequence[RepoInfo] = (),
) -> ServiceCore:
    """:func:`build_service`'s core alone: the store, the repositories and the state,
    without the use cases (a read-only caller such as the local ``pre-commit`` hook,
    :mod:`detente.service.commit_check`, imports none of the write services).

    Raises:
        See :func:`build_service`.
    """
    return _build(repo_paths, store_url=store_url, opened=opened, core_only=True)
