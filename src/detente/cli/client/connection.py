"""The composed :class:`Client` and :func:`connect`, which opens one for a repository.

One code path for both modes: :func:`connect` returns a :class:`Client` over an
``httpx.Client`` that either talks to a running server (``--server URL``, ``$DETENTE_URL``,
or a server found on ``http://127.0.0.1:7420``) or, in *local mode*, to the same FastAPI app
built in-process on the repository's default SQLite store
(``starlette.testclient.TestClient``, an ``httpx.Client`` subclass).

``httpx`` and the server stack are imported lazily so that ``detente --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, cast

from detente import errors
from detente.cli.client.claims import ClaimsEndpoints
from detente.cli.client.meetings import MeetingsEndpoints
from detente.cli.client.server import ServerEndpoints
from detente.cli.client.transport import REQUEST_TIMEOUT

if TYPE_CHECKING:
    import httpx

    from detente.vcs.repo import RepoInfo

__all__ = ["DEFAULT_URL", "LOCAL_ENV", "URL_ENV", "Client", "connect"]

#: Where ``connect`` looks for a running server when none is named.
DEFAULT_URL = "http://127.0.0.1:7420"
#: Environment variables read by :func:`connect`.
URL_ENV = "DETENTE_URL"
LOCAL_ENV = "DETENTE_LOCAL"

_PROBE_TIMEOUT = 0.25
_LOCAL_BASE_URL = "http://detente.local"


class Client(ClaimsEndpoints, MeetingsEndpoints, ServerEndpoints):
    """One method per API endpoint, returning the decoded JSON object.

    Args:
        http: the transport (``base_url`` set): an ``httpx.Client`` for a server, or a
            ``TestClient`` over the in-process app in local mode.
        mode: ``"server"`` or ``"local"`` (reported in ``--json`` output only).
        repo_name: the name the server knows the current repository by, if any.
        repo_path: top level of the current repository's working tree, if any.
        on_close: called once by :meth:`close` (local mode closes its store there).

    Every method raises the :mod:`detente.errors` exception named by a problem's
    ``code`` (see :func:`~detente.cli.problems.error_from_problem`) and
    :class:`~detente.cli.problems.ServerUnavailable` when the server cannot be reached.
    The endpoints are grouped by API area: claims (and takeovers, write checks),
    meetings, and the server itself with its event log.
    """


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

    Resolution order: an explicit ``url`` (or ``$DETENTE_URL``) is used as is; local mode
    when ``local`` (or ``$DETENTE_LOCAL=1``) says so; otherwise a server answering
    ``probe_url/healthz`` within ``probe_timeout`` seconds *and serving this repository*;
    otherwise local mode: the service built in-process on the repository's default store.

    Args:
        url: the server's base URL, e.g. ``http://127.0.0.1:7420``.
        repo: a directory inside the repository the commands are about (may be None, or
            not a repository, when ``url`` is given).
        local: force (True) or forbid (False) local mode; None reads ``$DETENTE_LOCAL``.
        probe_url: where to look for a running server.
        probe_timeout: seconds to wait for the probe.

    Returns:
        The :class:`Client`; close it when done.

    Raises:
        ValidationError: ``validation_error`` when both a URL and local mode are asked
            for, or local mode is needed and ``repo`` is not a git working tree.
        ServerUnavailable: an explicit server cannot be reached.
    """
    import httpx

    url = url or os.environ.get(URL_ENV) or None
    if local is None:
        local = _env_flag(LOCAL_ENV)
    if url and local:
        raise errors.ValidationError(
            "choose either a server (--server/DETENTE_URL) or local mode (--local)", field="server"
        )
    info, info_error = _open(repo)
    if url:
        http = httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT)
        client = Client(http, mode="server", repo_path=info.path if info else None)
        try:
            client.repo_name = _name_on_server(client, info, explicit=True)
        except BaseException:
            client.close()
            raise
        return client
    if not local and info is not None:
        probe = _probe(probe_url, probe_timeout)
        if probe is not None:
            client = Client(probe, mode="server", repo_path=info.path)
            try:
                name = _name_on_server(client, info, explicit=False)
            except errors.DetenteError:
                name = None
            if name is not None:
                client.repo_name = name
                return client
            client.close()  # a server for other repositories: work locally
    if info is None:
        raise info_error or errors.ValidationError("no repository given", field="repo")
    return _local_client(info)


def _open(repo: Path | None) -> tuple[RepoInfo | None, errors.DetenteError | None]:
    from detente.vcs.repo import open_repo

    if repo is None:
        return None, None
    try:
        return open_repo(Path(repo)), None
    except errors.DetenteError as exc:
        return None, exc


def _probe(url: str, timeout: float) -> httpx.Client | None:
    import httpx

    http = httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT)
    try:
        response = http.get("/healthz", timeout=timeout)
        if response.status_code == 200 and response.json().get("ok") is True:
            return http
    except (httpx.HTTPError, ValueError, AttributeError):
        pass
    http.close()
    return None


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
        if repo.get("path") and _same_repository(Path(repo["path"]), info):
            return str(repo["name"])
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
    from detente.api.app import create_app
    from detente.runtime import build_service

    with warnings.catch_warnings():
        # Starlette nudges towards httpx2; the TestClient still is an httpx.Client.
        warnings.filterwarnings("ignore", message=".*httpx2")
        from starlette.testclient import TestClient

    service = build_service([info.path])
    # No lifespan, so no background sweeper: expiry happens on every read and write.
    app = create_app(service, sweep_interval=None)
    # At run time the TestClient subclasses httpx.Client; starlette's annotations name
    # httpx2 (its preferred backend), hence the cast.
    http = cast("httpx.Client", TestClient(app, base_url=_LOCAL_BASE_URL))

    def close_store() -> None:
        with contextlib.suppress(Exception):
            service.store.close()

    return Client(
        http, mode="local", repo_name=info.name, repo_path=info.path, on_close=close_store
    )
