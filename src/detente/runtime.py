"""The composition root: wire a :class:`~detente.service.Service` to real repositories.

Adapters that need a service of their own (``detente serve``, the CLI's local mode, the
demo) build it here, so the defaults live in one place:

- each repository is opened with :func:`~detente.vcs.open_repo` and registered under its
  directory name (or the name given);
- the store URL is the argument, else ``$DETENTE_STORE``, else
  ``sqlite:///<common git dir>/detente/detente.db`` of the *first* repository, so every
  worktree of one repository (the main checkout and every claim worktree) shares one
  database;
- base commits are validated against the real repository with
  :func:`~detente.vcs.resolve_commit`.

Heavy modules (uvicorn, FastAPI) are imported only by :func:`serve`.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from detente.clock import Clock
from detente.errors import ValidationError
from detente.service import RepoConfig, Service
from detente.storage.clock import default_clock
from detente.storage.factory import open_store
from detente.vcs import default_store_path, open_repo, resolve_commit

if TYPE_CHECKING:
    import uvicorn

__all__ = ["build_service", "default_store_url", "make_server", "resolve_store_url", "serve"]

#: The environment variable naming the store URL when no ``--store`` is given.
STORE_ENV = "DETENTE_STORE"

#: Seconds between background lease sweeps of a served app.
SWEEP_INTERVAL = 1.0


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
) -> Service:
    """Open the repositories and the store, and build the service over them.

    Args:
        repo_paths: one directory inside each repository to coordinate (at least one).
        names: display names, positionally matching ``repo_paths``; a missing or None
            entry means the main worktree's directory name.
        store_url: ``sqlite:///path`` or ``memory://``; default ``$DETENTE_STORE``, else the
            first repository's default SQLite file (see the module docstring).
        clock: the time authority; default the system clock.

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
    for i, path in enumerate(repo_paths):
        name = names[i] if i < len(names) else None
        info = open_repo(Path(path), name)
        if any(c.name == info.name for c in configs):
            raise ValidationError(
                f"two repositories are named {info.name!r}; give one another name",
                field="name",
            )
        configs.append(RepoConfig(info.name, info.path, info.default_branch, info.case_insensitive))
    store = open_store(resolve_store_url(Path(repo_paths[0]), store_url))
    # Multi-node stores (PostgreSQL, etcd) are the lease-time authority: servers with
    # skewed machine clocks then agree on every deadline (detente.storage.clock).
    return Service(store, clock or default_clock(store), configs, resolve_commit=resolve_commit)


def make_server(
    service: Service,
    *,
    host: str = "127.0.0.1",
    port: int = 7420,
    sweep_interval: float = SWEEP_INTERVAL,
    log_level: str = "warning",
) -> uvicorn.Server:
    """A uvicorn server for ``service`` (not started).

    Args:
        service: the use cases to serve.
        host: interface to bind.
        port: TCP port (0 lets the OS choose; read it back from the socket you pass).
        sweep_interval: seconds between background lease sweeps.
        log_level: uvicorn's log level.

    Returns:
        The ``uvicorn.Server``; run it with ``server.run()`` (blocking, in any thread) and
        stop it with ``server.should_exit = True``.
    """
    import uvicorn

    from detente.api.app import create_app
    from detente.dashboard import mount as mount_dashboard

    app = create_app(service, sweep_interval=sweep_interval)
    mount_dashboard(app, service)  # the live dashboard at / (its actions call /v1)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=2,
        lifespan="on",
    )
    return uvicorn.Server(config)


def serve(
    service: Service,
    *,
    host: str = "127.0.0.1",
    port: int = 7420,
    sweep_interval: float = SWEEP_INTERVAL,
    sock: socket.socket | None = None,
) -> None:
    """Serve the HTTP API until SIGINT or SIGTERM, then return after a graceful shutdown.

    Args:
        service: the use cases to serve.
        host: interface to bind (the CLI refuses non-loopback hosts).
        port: TCP port.
        sweep_interval: seconds between background lease sweeps.
        sock: an already bound listening socket to serve on instead of ``host:port``.
    """
    server = make_server(service, host=host, port=port, sweep_interval=sweep_interval)
    stops: list[int] = []
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to
        # the handler that was installed before it; this one turns that into a return.
        for sig in (signal.SIGINT, signal.SIGTERM):
            handlers[sig] = signal.signal(sig, lambda signum, _frame: stops.append(signum))
    try:
        server.run(sockets=[sock] if sock is not None else None)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
