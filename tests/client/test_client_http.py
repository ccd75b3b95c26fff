"""The HTTP client: problems become detente errors, the event stream (parsing,
resumption), and connect's choice between a server and local mode."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest

from detente import errors
from detente.client import ServerUnavailable, SseMessage, connect, error_from_problem
from detente.client.http import REQUEST_TIMEOUT, HttpClient
from detente.operations import system


def test_a_revision_conflict_problem_becomes_revision_conflict_with_its_fields() -> None:
    body = {
        "type": "https://detente.dev/problems/revision-conflict",
        "title": "Revision conflict",
        "status": 409,
        "detail": "claim is at revision 3, not 2",
        "code": "revision_conflict",
        "current": {"id": "clm_1", "revision": 3},
        "expected": 2,
        "actual": 3,
        "eventIds": ["evt_9"],
    }

    exc = error_from_problem(409, body)

    assert isinstance(exc, errors.RevisionConflict)
    assert (exc.expected, exc.actual) == (2, 3)
    assert exc.extra == {
        "current": {"id": "clm_1", "revision": 3},
        "expected": 2,
        "actual": 3,
        "eventIds": ["evt_9"],
    }
    assert exc.detail == "claim is at revision 3, not 2"


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        ("validation_error", errors.ValidationError),
        ("not_found", errors.NotFoundError),
        ("lease_expired", errors.LeaseExpired),
        ("invalid_transition", errors.InvalidTransition),
        ("stale_base", errors.StaleBase),
        ("branch_in_use", errors.BranchInUse),
        ("store_unavailable", errors.StoreError),
    ],
)
def test_each_problem_code_maps_to_its_error_class(
    code: str, cls: type[errors.DetenteError]
) -> None:
    exc = error_from_problem(409, {"code": code, "detail": "d", "field": "paths[0]"})

    assert type(exc) is cls
    assert exc.code == code


def test_an_unknown_code_keeps_the_code_and_falls_back_on_the_status_family() -> None:
    exc = error_from_problem(409, {"code": "brand_new_conflict", "detail": "d"})

    assert isinstance(exc, errors.ConflictError)
    assert exc.code == "brand_new_conflict"


def test_a_bodiless_503_is_server_unavailable() -> None:
    assert isinstance(error_from_problem(503, {}), ServerUnavailable)


def test_the_stream_skips_comments_and_joins_multiline_data() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        text = ': ping\n\nid: 7\nevent: claim.announced\ndata: {"a":\ndata: 1}\n\n'
        return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})

    client = HttpClient(httpx.Client(transport=httpx.MockTransport(handler), base_url="http://x"))

    assert next(client.watch(since=0)) == SseMessage("7", "claim.announced", '{"a":\n1}')


def test_a_dropped_stream_resumes_with_last_event_id_and_loses_nothing() -> None:
    seen_ids: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/healthz":
            return httpx.Response(200, json={"ok": True, "head": 0})
        last = int(request.headers["Last-Event-ID"])
        seen_ids.append(request.headers.get("Last-Event-ID"))
        # Each connection delivers two events, then the server "drops" it.
        chunk = "".join(
            f"id: {seq}\nevent: e\ndata: {json.dumps({'seq': seq})}\n\n"
            for seq in (last + 1, last + 2)
        )
        return httpx.Response(200, text=chunk, headers={"content-type": "text/event-stream"})

    client = HttpClient(httpx.Client(transport=httpx.MockTransport(handler), base_url="http://x"))
    reconnects: list[int] = []

    stream = client.watch(since=0, on_reconnect=lambda pos, _why: reconnects.append(pos))
    got = [json.loads(next(stream).data)["seq"] for _ in range(5)]

    assert got == [1, 2, 3, 4, 5]
    assert seen_ids == ["0", "2", "4"]
    assert reconnects == [2, 4]


def test_a_refused_stream_raises_the_servers_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        problem = {"code": "validation_error", "detail": "unknown repository", "field": "repo"}
        return httpx.Response(422, json=problem)

    client = HttpClient(httpx.Client(transport=httpx.MockTransport(handler), base_url="http://x"))

    with pytest.raises(errors.ValidationError, match="unknown repository"):
        next(client.watch(since=0, repo="nope"))


def _refusing_url() -> tuple[socket.socket, str]:
    """A loopback port that is bound but not listening: connections are refused."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_connect_falls_back_to_local_mode_when_no_server_answers(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DETENTE_LOCAL")
    sock, url = _refusing_url()
    with sock, connect(None, repo, probe_url=url) as client:
        assert client.mode == "local"
        assert client.repo_name == "repo"
        assert client.list_claims()["claims"] == []


def test_an_unreachable_explicit_server_is_server_unavailable(repo: Path) -> None:
    sock, url = _refusing_url()
    with sock, pytest.raises(ServerUnavailable, match="cannot reach"):
        connect(url, repo, local=False)


def test_a_server_that_accepts_but_never_answers_is_reported_as_busy_not_unreachable() -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # the kernel accepts connections; nobody ever answers
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    route = system.AUDIT_VERIFY._replace(read_timeout=0.2)
    with (
        silent,
        HttpClient(httpx.Client(base_url=url), repo_name="demo") as client,
        pytest.raises(ServerUnavailable) as failed,
    ):
        client._call(route)
    assert "did not answer GET /v1/audit/verify within 0.2 s" in failed.value.detail
    assert "busy or stuck" in failed.value.detail


def test_the_audit_may_take_longer_than_an_ordinary_request() -> None:
    assert system.AUDIT_VERIFY.read_timeout is not None
    assert system.AUDIT_VERIFY.read_timeout > REQUEST_TIMEOUT
