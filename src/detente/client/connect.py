"""Open the right client for a repository: a running server, or the service in-process.

:func:`connect` returns an :class:`~detente.client.http.HttpClient` when a server is
named (``--server URL``, ``$DETENTE_URL``) or found on ``http://127.0.0.1:7420`` serving
this repository, else an :class:`~detente.client.inprocess.InProcessClient` over the
service built on the repository's default store (*local mode*).

``httpx`` is imported only when a server is involved, and nothing of the HTTP server
stack ever is, so that local mode starts fast.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from detente import errors

if TYPE_CHECKING:
    from collections.abc import Callable

    from detente.client.protocol import Client
    from detente.vcs.repo import RepoInfo

__all__ = ["DEFAULT_URL", "LOCAL_ENV", "URL_ENV", "connect", "connect_server", "open_local"]

#: Where ``connect`` looks for a running server when none is named.
DEFAULT_URL = "http://127.0.0.1:7420"
#: Environment variables read by :func:`connect`.
URL_ENV = "DETENTE_URL"
LOCAL_ENV = "DETENTE_LOCAL"

_PROBE_TIMEOUT = 0.25


# ---------------------------------------------------------------------------- connect


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def connect(
    url: str | None,
    repo: Path | None,
    *,
    local: bool | None = None,
    probe_url: str = DEFAULT_URL,
    probe_timeout: float = _PROBE_TIMEOUT,
) -> Client:
    """Open a client for the repository at ``repo``.

    Resolution order: an explicit ``url`` is used as is; local mode when ``local`` is
    True; then the environment, ``$DETENTE_URL`` or ``$DETENTE_LOCAL=1`` (an explicit
    argument beats the environment, as a command-line flag beats an environment variable:
    ``--local`` with ``DETENTE_URL`` set works locally); otherwise a server answering
    ``probe_url/healthz`` within ``probe_timeout`` seconds *and serving this repository*;
    otherwise local mode: the service built in-process on the repository's default store.

    Args:
        url: the server's base URL, e.g. ``http://127.0.0.1:7420``.
        repo: a directory inside the repository the commands are about (may be None, or
            not a repository, when ``url`` is given).
        local: force (True) or forbid (False) local mode; None reads ``$DETENTE_LOCAL``
            (unless ``url`` is given).
        probe_url: where to look for a running server.
        probe_timeout: seconds to wait for the probe.

    Returns:
        The :class:`Client`; close it when done.

    Raises:
        ValidationError: ``validation_error`` when both ``url`` and ``local`` are given
            (or, with neither, both ``$DETENTE_URL`` and ``$DETENTE_LOCAL``), or local mode
            is needed and ``repo`` is not a git working tree.
        ServerUnavailable: an explicit server cannot be reached.
    """
    url, local = _resolve(url, local)
    info, info_error = _open(repo)
    server = _server(url, local, info, probe_url, probe_timeout, light=False)
    if server is not None:
        return server
    if info is None:
        raise info_error or errors.ValidationError("no repository given", field="repo")
    return _local_client(info)


def connect_server(
    repo: Path,
    *,
    probe_url: str = DEFAULT_URL,
    probe_timeout: float = _PROBE_TIMEOUT,
    known_name: Callable[[str, RepoInfo], str | None] | None = None,
) -> tuple[Client | None, RepoInfo]:
    """The server :func:`connect` would choose for ``repo`` (with no ``url`` or ``local``
    argument), on the light transport (:func:`~detente.client.stdlib_http.light_client`:
    no ``httpx`` unless requests must be signed); None where :func:`connect` would work
    locally. Nothing is opened or created locally: the git hooks decide then whether the
    repository has a store at all.

    ``known_name(url, repository)``, when given, may return the name the server at
    ``url`` gives the repository (remembered by the caller): the server is then not asked
    (``GET /v1/repos``). A probed server is still probed.

    Returns:
        ``(client or None, the repository opened)``; close the client when done.

    Raises:
        ValidationError: ``validation_error`` when both ``$DETENTE_URL`` and
            ``$DETENTE_LOCAL`` are set, or ``repo`` is not a git working tree.
        ServerUnavailable: the server named by ``$DETENTE_URL`` cannot be reached.
    """
    url, local = _resolve(None, None)
    info, info_error = _open(repo)
    if info is None:
        raise info_error or errors.ValidationError("no repository given", field="repo")
    return _server(url, local, info, probe_url, probe_timeout, light=True, known=known_name), info


def _resolve(url: str | None, local: bool | None) -> tuple[str | None, bool | None]:
    """The arguments, else the environment (see :func:`connect`)."""
    if url and local:
        raise errors.ValidationError(
            "choose either a server (--server/DETENTE_URL) or local mode (--local)", field="server"
        )
    if not url and not local:
        url = os.environ.get(URL_ENV) or None
        if local is None and _env_flag(LOCAL_ENV):
            if url:
                raise errors.ValidationError(
                    "both DETENTE_URL and DETENTE_LOCAL are set: unset one, or choose with "
                    "--server URL or --local",
                    field="server",
                )
            local = True
    return url, local


def _server(
    url: str | None,
    local: bool | None,
    info: RepoInfo | None,
    probe_url: str,
    probe_timeout: float,
    *,
    light: bool,
    known: Callable[[str, RepoInfo], str | None] | None = None,
) -> Client | None:
    """The server client :func:`connect` chooses (None: local mode)."""
    if url:
        client = _client_of(url, light)
        client.repo_path = info.path if info else None
        name = known(client.url, info) if known is not None and info is not None else None
        if name is not None:
            client.repo_name = name
            return client
        try:
            client.repo_name = _name_on_server(client, info, explicit=True)
        except BaseException:
            client.close()
            raise
        return client
    if not local and info is not None:
        probe = _probe(probe_url, probe_timeout, light=light)
        if probe is not None:
            client = probe
            client.repo_path = info.path
            name = known(client.url, info) if known is not None else None
            if name is not None:
                client.repo_name = name
                return client
            try:
                name = _name_on_server(client, info, explicit=False)
            except errors.DetenteError:
                name = None
            if name is not None:
                client.repo_name = name
                return client
            client.close()  # a server for other repositories: work locally
    return None


def _client_of(url: str, light: bool) -> Client:
    if light:
        from detente.client.stdlib_http import light_client

        return light_client(url)
    from detente.client.http import HttpClient

    return HttpClient.to(url)


def _open(repo: Path | None) -> tuple[RepoInfo | None, errors.DetenteError | None]:
    from detente.vcs.repo import open_repo

    if repo is None:
        return None, None
    try:
        return open_repo(Path(repo)), None
    except errors.DetenteError as exc:
        return None, exc


def _probe(url: str, timeout: float, *, light: bool = False) -> Client | None:
    """A client of the server answering ``url/healthz`` within ``timeout`` seconds.

    A port nobody listens on is found with one TCP connection attempt, before httpx is
    imported: local mode, the common case of a CLI call, does not pay for the HTTP stack.
    """
    if not listening(url, timeout):
        return None
    if light:
        from detente.client.stdlib_http import light_client

        found = light_client(url)
        try:
            if found.health().get("ok") is True:
                return found
        except errors.DetenteError:
            pass
        found.close()
        return None
    import httpx

    from detente.client.http import HttpClient
    from detente.operations.system import HEALTH

    client = HttpClient.to(url)
    try:
        response = client.http.get(HEALTH.path, timeout=timeout)
        if response.status_code == 200 and response.json().get("ok") is True:
            return client
    except (httpx.HTTPError, ValueError, AttributeError):
        pass
    client.close()
    return None


def listening(url: str, timeout: float = _PROBE_TIMEOUT) -> bool:
    """Whether something accepts TCP connections on ``url``'s host and port."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def _name_on_server(client: Client, info: RepoInfo | None, *, explicit: bool) -> str | None:
    """The name the server gives the repository ``info`` (matched by git common dir).

    Unmatched, an explicitly named server gets the local name (the server then answers
    ``validation_error`` naming the repositories it serves) and a probed one gets None.
    Without a local repository, a server of exactly one repository names that one.
    """
    served = client.repos()["repos"]
    if info is None:
        return str(served[0]["name"]) if len(served) == 1 else None
    for repo in served:
        path = repo["path"]
        if path and _same_repository(Path(path), info):
            return repo["name"]
    return info.name if explicit else None


def _same_repository(path: Path, info: RepoInfo) -> bool:
    from detente.vcs.repo import default_store_path

    if not path.is_dir():
        return False
    if (path / ".git").resolve() == info.common_dir:
        return True
    try:
        return default_store_path(path).parent.parent == info.common_dir
    except errors.DetenteError:
        return False


def _local_client(info: RepoInfo) -> Client:
    """Local mode: the service on the repository's default store, called in-process (no
    background sweeper: expiry happens on every read and write)."""
    return open_local(info.path, repo_name=info.name, repo_path=info.path, opened=info)


def open_local(
    repo: Path,
    *,
    store_url: str | None = None,
    repo_name: str | None = None,
    repo_path: Path | None = None,
    opened: RepoInfo | None = None,
) -> Client:
    """An in-process client on the service built for ``repo`` (it owns the store).

    Args:
        repo: a directory inside the repository's working tree.
        store_url: the store; default ``$DETENTE_STORE`` or the repository's SQLite file
            (shared by every worktree, every local-mode process and ``detente serve``).
        repo_name: the current repository's name (default: the only one served).
        repo_path: top level of the current repository's working tree, if known.
        opened: ``repo`` already opened (:func:`~detente.vcs.open_repo`): saves its git calls.

    Its writes are authorized as :func:`~detente.operations.local_principal.local_principal`
    says: every role on a store never served with authentication, else only the roles
    of ``[local] roles`` in the repository's ``detente.toml`` (none: ``forbidden``
    naming ``--server`` and ``$DETENTE_TOKEN``). Reads are always allowed.

    Raises:
        ValidationError: ``repo`` is not a git working tree, the store URL is bad, or
            ``detente.toml`` is invalid.
        StoreError: the store cannot be opened.
    """
    import functools

    from detente.client.inprocess import InProcessClient
    from detente.config import load_config
    from detente.operations.door import Operations
    from detente.operations.local_principal import local_principal
    from detente.runtime import build_service
    from detente.vcs.repo import open_repo

    info = opened or open_repo(Path(repo))
    config = load_config(info.main_worktree or info.path)
    service = build_service([repo], store_url=store_url, opened=[info], config=config)
    return InProcessClient(
        service,
        repo_name=repo_name,
        repo_path=repo_path,
        owns_store=True,
        # the same rules as a server's; the principal is local, whose roles depend on
        # whether a server with authentication serves this store (asked per write)
        operations=Operations(
            service, principal=functools.partial(local_principal, service, config.local_roles)
        ),
    )
