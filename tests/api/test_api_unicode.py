"""Text that is not Unicode, and faults nobody translated: a clear answer, nothing changed,
the connection still usable."""

from __future__ import annotations

import http.client
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from api.conftest import running
from detente.api.app import create_app
from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import counting_ids

#: A JSON document whose one string is a lone surrogate: valid JSON, not Unicode text.
_SURROGATE_BODY = '{"probe": "a\\ud800b"}'


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "AGENTS.md").write_text("# AGENTS\n\n## Build\n\nmake\n")
    return root


@pytest.fixture
def service(tmp_path: Path, repo: Path, clock: FakeClock) -> Iterator[Service]:
    store = SqliteStore(tmp_path / "detente.db")
    yield Service(store, clock, [RepoConfig("demo", repo)], ids=counting_ids())
    store.close()


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with running(service) as base, httpx.Client(base_url=base, timeout=30) as http:
        yield http


def _head(http: httpx.Client) -> int:
    return int(http.get("/healthz").json()["head"])


def _body_routes(service: Service) -> list[tuple[str, str]]:
    """Every operation of the OpenAPI document that takes a JSON body, path ids filled."""
    routes = []
    for path, operations in create_app(service).openapi()["paths"].items():
        for method, operation in operations.items():
            if "application/json" in operation.get("requestBody", {}).get("content", {}):
                routes.append((method.upper(), re.sub(r"\{[^}]+\}", "x", path)))
    return routes


def test_every_body_with_a_lone_surrogate_is_a_validation_problem_naming_it(
    client: httpx.Client, service: Service
) -> None:
    routes = _body_routes(service)
    before = _head(client)

    answers = {
        (method, path): client.request(
            method, path, content=_SURROGATE_BODY, headers={"content-type": "application/json"}
        )
        for method, path in routes
    }

    assert len(routes) > 25
    for route, answer in answers.items():
        assert answer.status_code == 422, (route, answer.text)
        problem = answer.json()
        assert (problem["code"], problem["field"]) == ("validation_error", "probe"), route
        assert "not valid Unicode" in problem["detail"], route
    assert _head(client) == before


def test_a_lone_surrogate_deep_in_a_claim_names_its_field(client: httpx.Client) -> None:
    raw = (
        '{"repo": "demo", "objective": "docs", "baseCommit": "' + "a" * 40 + '", '
        '"paths": ["docs/**"], "agent": {"id": "al\\udfffice", "name": "alice"}}'
    )

    answer = client.post("/v1/claims", content=raw, headers={"content-type": "application/json"})

    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "agent.id"
    assert client.get("/v1/claims").json()["claims"] == []


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/memory/render", {"repo": "demo", "path": "AGENTS.md"}),
        (
            "/v1/memory/append",
            {"repo": "demo", "path": "LOG.md", "claimId": "clm_x", "fencingToken": 1, "entry": "x"},
        ),
    ],
)
def test_a_memory_worktree_with_a_nul_byte_is_a_validation_problem(
    client: httpx.Client, path: str, body: dict[str, object]
) -> None:
    before = _head(client)

    answer = client.post(path, json={**body, "worktree": "/tmp/x\u0000"})

    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "worktree"
    assert _head(client) == before


def test_after_an_unexpected_error_the_same_connection_answers_the_next_request(
    service: Service,
) -> None:
    with running(service) as base:
        port = int(base.rsplit(":", 1)[1])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.request("GET", "/healthz")
            assert connection.getresponse().read() and connection.sock is not None
            kept = connection.sock
            service.store.close()  # a fault nobody translates: sqlite3.ProgrammingError
            connection.request("GET", "/v1/claims")
            failed = connection.getresponse()
            assert failed.status == 500 and b"internal_error" in failed.read()
            connection.request("GET", "/openapi.json")  # no store needed
            after = connection.getresponse()
            after.read()
            assert after.status == 200
            assert connection.sock is kept  # the same keep-alive connection
        finally:
            connection.close()
