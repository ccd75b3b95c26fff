"""A typed client of the detente HTTP API (API.md v1), shared by the CLI and the tests.

One code path for both modes: :func:`connect` returns a :class:`Client` over an
``httpx.Client`` that either talks to a running server (``--server URL``, ``$DETENTE_URL``,
or a server found on ``http://127.0.0.1:7420``) or, in *local mode*, to the same FastAPI app
built in-process on the repository's default SQLite store
(``starlette.testclient.TestClient``, an ``httpx.Client`` subclass).

Every method returns the response's JSON object. A non-2xx ``application/problem+json``
becomes the :mod:`detente.errors` exception of its ``code`` (the problem's other fields,
``current``, ``expected``, ``actual``, ``eventIds``, ``field``..., kept in ``.extra``); an
unreachable server becomes :class:`ServerUnavailable` (code ``server_unavailable``).

``httpx`` and the server stack are imported lazily so that ``detente --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from detente import errors
from detente.cli.problems import (
    ServerUnavailable,
    decode,
    error_from_problem,
    error_from_response,
)
from detente.cli.sse import SseMessage, iter_sse

if TYPE_CHECKING:
    import httpx

    from detente.vcs.repo import RepoInfo

__all__ = [
    "DEFAULT_URL",
    "Client",
    "ServerUnavailable",
    "SseMessage",
    "connect",
    "error_from_problem",
    "iter_sse",
]

#: Where ``connect`` looks for a running server when none is named.
DEFAULT_URL = "http://127.0.0.1:7420"
#: Environment variables read by :func:`connect`.
URL_ENV = "DETENTE_URL"
LOCAL_ENV = "DETENTE_LOCAL"

_PROBE_TIMEOUT = 0.25
_REQUEST_TIMEOUT = 30.0
_LOCAL_BASE_URL = "http://detente.local"


class Client:
    """One method per API endpoint, returning the decoded JSON object.

    Args:
        http: the transport (``base_url`` set): an ``httpx.Client`` for a server, or a
            ``TestClient`` over the in-process app in local mode.
        mode: ``"server"`` or ``"local"`` (reported in ``--json`` output only).
        repo_name: the name the server knows the current repository by, if any.
        repo_path: top level of the current repository's working tree, if any.
        on_close: called once by :meth:`close` (local mode closes its store there).

    Every method raises the :mod:`detente.errors` exception named by a problem's
    ``code`` (see :func:`error_from_problem`) and :class:`ServerUnavailable` when the
    server cannot be reached.
    """

    def __init__(
        self,
        http: httpx.Client,
        *,
        mode: str = "server",
        repo_name: str | None = None,
        repo_path: Path | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.http = http
        self.mode = mode
        self.repo_name = repo_name
        self.repo_path = repo_path
        self._on_close = on_close

    @property
    def url(self) -> str:
        """The server's base URL (a placeholder host in local mode)."""
        return str(self.http.base_url).rstrip("/")

    def close(self) -> None:
        """Close the transport (and the local store). Idempotent."""
        self.http.close()
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ transport

    def _request(
        self,
        method: str,
        path: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        import httpx

        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            response = self.http.request(method, path, json=json, params=query or None)
        except httpx.TransportError as exc:
            raise ServerUnavailable(
                f"cannot reach the detente server at {self.url}: {exc}", url=self.url
            ) from None
        return decode(response)

    # ------------------------------------------------------------------ endpoints

    def health(self) -> dict[str, Any]:
        """``GET /healthz``: ``{ok, version, head}``."""
        return self._request("GET", "/healthz")

    def repos(self) -> dict[str, Any]:
        """``GET /v1/repos``: ``{repos[{name, path, defaultBranch, caseInsensitive, headOid}]}``."""
        return self._request("GET", "/v1/repos")

    def open_claim(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/claims`` (camelCase seed fields): ``{claim, overlaps[], meeting}``."""
        return self._request("POST", "/v1/claims", json=body)

    def get_claim(self, claim_id: str) -> dict[str, Any]:
        """``GET /v1/claims/{id}``: ``{claim, overlaps[], meetings[]}`` (overlaps recomputed)."""
        return self._request("GET", f"/v1/claims/{claim_id}")

    def list_claims(
        self,
        *,
        repo: str | None = None,
        status: str | None = None,
        path: str | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """``GET /v1/claims``: ``{claims[]}`` filtered by repo, status, covered path, agent."""
        params = {"repo": repo, "status": status, "path": path, "agent": agent}
        return self._request("GET", "/v1/claims", params=params)

    def renew(
        self,
        claim_id: str,
        *,
        expected_lease_revision: int,
        expected_claim_revision: int,
        ttl_seconds: int,
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/renew``: ``{claim}``."""
        body = {
            "expectedLeaseRevision": expected_lease_revision,
            "expectedClaimRevision": expected_claim_revision,
            "ttlSeconds": ttl_seconds,
        }
        return self._request("POST", f"/v1/claims/{claim_id}/renew", json=body)

    def scope_change(
        self,
        claim_id: str,
        *,
        expected_claim_revision: int,
        add_paths: Sequence[str] = (),
        remove_paths: Sequence[str] = (),
        add_modules: Sequence[str] = (),
        add_symbols: Sequence[str] = (),
        add_expected_contract_changes: Sequence[str] = (),
        reason: str | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/scope-change``: ``{claim, overlaps[], meeting}``."""
        body = {
            "expectedClaimRevision": expected_claim_revision,
            "addPaths": list(add_paths),
            "removePaths": list(remove_paths),
            "addModules": list(add_modules),
            "addSymbols": list(add_symbols),
            "addExpectedContractChanges": list(add_expected_contract_changes),
            "reason": reason,
        }
        return self._request("POST", f"/v1/claims/{claim_id}/scope-change", json=body)

    def suspend(
        self, claim_id: str, *, expected_claim_revision: int, reason: str | None = None
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/suspend``: ``{claim}``."""
        body = {"expectedClaimRevision": expected_claim_revision, "reason": reason}
        return self._request("POST", f"/v1/claims/{claim_id}/suspend", json=body)

    def resume(
        self, claim_id: str, *, expected_claim_revision: int, reason: str | None = None
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/resume``: ``{claim}``."""
        body = {"expectedClaimRevision": expected_claim_revision, "reason": reason}
        return self._request("POST", f"/v1/claims/{claim_id}/resume", json=body)

    def abandon(
        self,
        claim_id: str,
        *,
        expected_claim_revision: int,
        head_commit: str | None = None,
        diff_summary: Mapping[str, Any] | None = None,
        memory_state: Mapping[str, Any] | None = None,
        reason: str | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/abandon`` (records head commit and diff summary): ``{claim}``."""
        body = {
            "expectedClaimRevision": expected_claim_revision,
            "headCommit": head_commit,
            "diffSummary": dict(diff_summary or {}),
            "memoryState": dict(memory_state or {}),
            "reason": reason,
        }
        return self._request("POST", f"/v1/claims/{claim_id}/abandon", json=body)

    def complete(
        self,
        claim_id: str,
        *,
        expected_claim_revision: int,
        expected_base_ref: Mapping[str, Any] | None = None,
        evidence: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/complete``: ``{claim}`` (``invalid_transition`` for now)."""
        body: dict[str, Any] = {"expectedClaimRevision": expected_claim_revision}
        if expected_base_ref is not None:
            body["expectedBaseRef"] = dict(expected_base_ref)
        if evidence is not None:
            body["evidence"] = dict(evidence)
        return self._request("POST", f"/v1/claims/{claim_id}/complete", json=body)

    def list_meetings(
        self, *, repo: str | None = None, status: str | None = None
    ) -> dict[str, Any]:
        """``GET /v1/meetings``: ``{meetings[]}``."""
        return self._request("GET", "/v1/meetings", params={"repo": repo, "status": status})

    def get_meeting(self, meeting_id: str) -> dict[str, Any]:
        """``GET /v1/meetings/{id}``: ``{meeting}``."""
        return self._request("GET", f"/v1/meetings/{meeting_id}")

    def propose(
        self,
        meeting_id: str,
        *,
        expected_meeting_revision: int,
        claim_id: str,
        resolution: Mapping[str, Any],
    ) -> dict[str, Any]:
        """``POST /v1/meetings/{id}/proposals`` (proposer accepts it): ``{meeting, claims[]}``."""
        body = {
            "expectedMeetingRevision": expected_meeting_revision,
            "claimId": claim_id,
            "resolution": dict(resolution),
        }
        return self._request("POST", f"/v1/meetings/{meeting_id}/proposals", json=body)

    def accept_proposal(
        self, meeting_id: str, proposal_id: str, *, expected_meeting_revision: int, claim_id: str
    ) -> dict[str, Any]:
        """``POST /v1/meetings/{id}/proposals/{proposalId}/accept``: ``{meeting, claims[]}``."""
        body = {"expectedMeetingRevision": expected_meeting_revision, "claimId": claim_id}
        return self._request(
            "POST", f"/v1/meetings/{meeting_id}/proposals/{proposal_id}/accept", json=body
        )

    def resolve_meeting(
        self,
        meeting_id: str,
        *,
        expected_meeting_revision: int,
        resolution: Mapping[str, Any],
        resolved_by: str,
    ) -> dict[str, Any]:
        """``POST /v1/meetings/{id}/resolve`` (a human principal): ``{meeting, claims[]}``."""
        body = {
            "expectedMeetingRevision": expected_meeting_revision,
            "resolution": dict(resolution),
            "resolvedBy": resolved_by,
        }
        return self._request("POST", f"/v1/meetings/{meeting_id}/resolve", json=body)

    def accept_handoff(
        self, meeting_id: str, *, expected_meeting_revision: int, claim_id: str
    ) -> dict[str, Any]:
        """``POST /v1/meetings/{id}/handoff/accept`` (the recipient): ``{meeting, claims[]}``."""
        body = {"expectedMeetingRevision": expected_meeting_revision, "claimId": claim_id}
        return self._request("POST", f"/v1/meetings/{meeting_id}/handoff/accept", json=body)

    def take_over(
        self,
        body: Mapping[str, Any],
        *,
        claim_id: str,
        expected_claim_revision: int,
        pieces: Sequence[Mapping[str, str]] = (),
    ) -> dict[str, Any]:
        """``POST /v1/claims`` with ``takeoverOf``: ``{claim, overlaps[], meeting}``.

        Args:
            body: the successor's seed (``baseCommit`` may be left out: the server then
                keeps the predecessor's base).
            claim_id: the predecessor (expired or abandoned).
            expected_claim_revision: the predecessor's revision as read.
            pieces: ``[{target, decision: continue|supersede|discard}]``.
        """
        seed = dict(body)
        seed["takeoverOf"] = {
            "claimId": claim_id,
            "expectedClaimRevision": expected_claim_revision,
            "pieces": [dict(p) for p in pieces],
        }
        return self._request("POST", "/v1/claims", json=seed)

    def approve_takeover(
        self, claim_id: str, *, expected_claim_revision: int, approver: str, kind: str = "human"
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/takeover/approve`` (``kind`` human|owner): ``{claim, ...}``."""
        body = {
            "expectedClaimRevision": expected_claim_revision,
            "approver": approver,
            "kind": kind,
        }
        return self._request("POST", f"/v1/claims/{claim_id}/takeover/approve", json=body)

    def check_writes(
        self, claim_id: str, paths: Sequence[str], *, fencing_token: int | None = None
    ) -> dict[str, Any]:
        """``POST /v1/claims/{id}/writes/check``: ``{ok, claimId, paths}`` when allowed.

        Raises ``overlap_blocking`` (``blockers``), ``out_of_scope`` (``paths``),
        ``stale_fencing_token``, ``lease_expired`` or ``invalid_transition`` otherwise.
        """
        body: dict[str, Any] = {"paths": list(paths)}
        if fencing_token is not None:
            body["fencingToken"] = fencing_token
        return self._request("POST", f"/v1/claims/{claim_id}/writes/check", json=body)

    def events(
        self, *, since: int = 0, limit: int = 100, repo: str | None = None
    ) -> dict[str, Any]:
        """``GET /v1/events``: ``{events[], nextSince}``."""
        params = {"since": since, "limit": limit, "repo": repo}
        return self._request("GET", "/v1/events", params=params)

    def audit_verify(self) -> dict[str, Any]:
        """``GET /v1/audit/verify``: ``{ok, events, headHash}`` or the first broken link."""
        return self._request("GET", "/v1/audit/verify")

    # ------------------------------------------------------------------ live events

    def watch(
        self,
        *,
        since: int | None = None,
        repo: str | None = None,
        poll_interval: float = 0.5,
        give_up_after: float = 30.0,
        read_timeout: float = 60.0,
        on_reconnect: Callable[[int, str], None] | None = None,
    ) -> Iterator[SseMessage]:
        """Follow the event log from ``since`` (default: the current head) forever.

        With a server this reads ``GET /v1/events/stream`` and, when the connection
        drops, reconnects with ``Last-Event-ID`` so nothing is lost or repeated. In
        local mode there is no long-lived server to stream from, so it polls
        ``GET /v1/events`` every ``poll_interval`` seconds (other processes write to the
        same store).

        Args:
            since: sequence to start after; None means the head at call time.
            repo: only this repository's events.
            poll_interval: seconds between polls in local mode.
            give_up_after: seconds of failed reconnection before giving up.
            read_timeout: seconds of silence after which the connection counts as dropped
                (the server pings every 15 s); the stream then resumes transparently.
            on_reconnect: called as ``(position, reason)`` before each reconnection.

        Yields:
            One :class:`SseMessage` per event (``data`` is the event's JSON envelope), or
            an ``event == "resync"`` message when the server cannot serve the position.

        Raises:
            ServerUnavailable: the server stayed unreachable for ``give_up_after`` seconds.
            DetenteError: the server refused the stream (e.g. unknown repo).
        """
        position = since if since is not None else int(self.health()["head"])
        if self.mode == "local":
            yield from self._poll(position, repo, poll_interval)
        else:
            yield from self._stream(position, repo, give_up_after, read_timeout, on_reconnect)

    def _poll(self, position: int, repo: str | None, interval: float) -> Iterator[SseMessage]:
        import json

        while True:
            page = self.events(since=position, limit=500, repo=repo)
            for event in page["events"]:
                position = int(event["seq"])
                yield SseMessage(str(position), str(event["type"]), json.dumps(event))
            if not page["events"]:
                time.sleep(interval)

    def _stream(
        self,
        position: int,
        repo: str | None,
        give_up_after: float,
        read_timeout: float,
        on_reconnect: Callable[[int, str], None] | None,
    ) -> Iterator[SseMessage]:
        import httpx

        params: dict[str, str | int] = {"since": position}
        if repo:
            params["repo"] = repo
        timeout = httpx.Timeout(_REQUEST_TIMEOUT, read=read_timeout)
        failing_since: float | None = None
        backoff = 0.1
        while True:
            headers = {"Accept": "text/event-stream", "Last-Event-ID": str(position)}
            try:
                with self.http.stream(
                    "GET", "/v1/events/stream", params=params, headers=headers, timeout=timeout
                ) as response:
                    if response.status_code >= 300:
                        response.read()
                        raise error_from_response(response)
                    failing_since, backoff = None, 0.1
                    for message in iter_sse(response.iter_lines()):
                        if message.id is not None and message.id.isdigit():
                            position = int(message.id)
                        yield message
                reason = "the server closed the stream"
            except httpx.TransportError as exc:
                reason = f"{type(exc).__name__}: {exc}"
            now = time.monotonic()
            failing_since = failing_since if failing_since is not None else now
            if now - failing_since > give_up_after:
                raise ServerUnavailable(
                    f"lost the event stream of {self.url} and could not reconnect for "
                    f"{give_up_after:.0f} s ({reason})",
                    url=self.url,
                    lastEventId=position,
                )
            if on_reconnect is not None:
                on_reconnect(position, reason)
            time.sleep(backoff)
            backoff = min(backoff * 2, 2.0)


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
        http = httpx.Client(base_url=url, timeout=_REQUEST_TIMEOUT)
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

    http = httpx.Client(base_url=url, timeout=_REQUEST_TIMEOUT)
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
