"""Cheap claim reads on both clients: pages of ``GET /v1/claims``, ``include`` on one claim."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.conftest import running
from detente import errors
from detente.client import Client, connect
from detente.client.inprocess import InProcessClient
from detente.runtime import build_service


@pytest.fixture(params=["inprocess", "http"])
def client(request: pytest.FixtureRequest, repo: Path, tmp_path: Path) -> Iterator[Client]:
    service = build_service([repo], store_url=f"sqlite:///{tmp_path / 'detente.db'}")
    try:
        if request.param == "inprocess":
            yield InProcessClient(service, repo_path=repo)
            return
        with running(service) as base, connect(base, repo, local=False) as http:
            yield http
    finally:
        service.store.close()


def _open(client: Client, session: str, path: str) -> dict[str, Any]:
    body = {
        "repo": client.repo_name,
        "objective": f"{session} edits {path}",
        "baseCommit": "HEAD",
        "paths": [path],
        "agent": {"id": f"agent-{session}", "name": session, "sessionId": session},
    }
    opened: dict[str, Any] = client.open_claim(body)["claim"]
    return opened


def test_pages_list_every_claim_once_in_list_order(client: Client) -> None:
    opened = [_open(client, f"s{i}", f"src/p{i}/**")["id"] for i in range(7)]

    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = client.list_claims(limit=3, cursor=cursor)
        seen += [c["id"] for c in page["claims"]]
        pages += 1
        cursor = page["nextCursor"]
        if cursor is None:
            break

    assert seen == opened
    assert pages == 3
    assert client.list_claims()["nextCursor"] is None  # no limit: one page, as before


def test_a_claim_opened_while_paging_shows_up_on_a_later_page(client: Client) -> None:
    opened = [_open(client, f"s{i}", f"src/p{i}/**")["id"] for i in range(3)]
    page = client.list_claims(limit=2)
    late = _open(client, "late", "docs/**")["id"]

    rest = client.list_claims(limit=2, cursor=page["nextCursor"])

    assert [c["id"] for c in page["claims"]] == opened[:2]
    assert [c["id"] for c in rest["claims"]] == [opened[2], late]
    assert rest["nextCursor"] is None


def test_claims_filter_by_agent_session(client: Client) -> None:
    mine = _open(client, "s1", "src/a/**")["id"]
    _open(client, "s2", "src/b/**")

    listed = client.list_claims(session="s1")["claims"]

    assert [c["id"] for c in listed] == [mine]


@pytest.mark.parametrize(
    ("limit", "cursor", "field"),
    [(0, None, "limit"), (1001, None, "limit"), (5, "bm9wZQ", "cursor"), (5, "%%%", "cursor")],
)
def test_a_bad_page_is_refused_naming_the_field(
    client: Client, limit: int, cursor: str | None, field: str
) -> None:
    _open(client, "s1", "src/a/**")

    with pytest.raises(errors.ValidationError) as caught:
        client.list_claims(limit=limit, cursor=cursor)

    assert caught.value.field == field


def test_a_claim_read_runs_no_git_work_unless_asked(client: Client) -> None:
    claim = _open(client, "s1", "src/a/**")

    plain = client.get_claim(claim["id"])
    bare = client.get_claim(claim["id"], include=[])
    worked = client.get_claim(claim["id"], include=["work"])

    assert plain["work"] is None and bare["work"] is None
    assert worked["work"] is not None and "branchHead" in worked["work"]
    assert plain["claim"] == bare["claim"] == worked["claim"]


def test_semantic_overlaps_are_computed_only_when_included(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DETENTE_SIMILARITY", "lexical")
    mine = _open(client, "s1", "src/retry.py")
    client.open_claim(
        {
            "repo": client.repo_name,
            "objective": mine["objective"],
            "baseCommit": "HEAD",
            "paths": ["web/retry.ts"],
        }
    )

    default = client.get_claim(mine["id"])
    bare = client.get_claim(mine["id"], include=[])

    assert len(default["semanticOverlaps"]) == 1
    assert bare["semanticOverlaps"] == []


def test_an_unknown_include_part_is_refused(client: Client) -> None:
    claim = _open(client, "s1", "src/a/**")

    with pytest.raises(errors.ValidationError) as caught:
        client.get_claim(claim["id"], include=["work", "everything"])

    assert caught.value.field == "include"
