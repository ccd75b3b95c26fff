"""Both client implementations answer alike: same shapes, same refusals, same fields.

Each test runs against the in-process client (the service called directly) and the HTTP
client (a real uvicorn server over the same kind of store).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from api.conftest import running
from detente import errors
from detente.client import Client, connect
from detente.client.inprocess import InProcessClient
from detente.runtime import build_service
from detente.vcs.repo import current_oid


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


def _open(client: Client, session: str, *paths: str, advisory: bool = False) -> dict:
    body = {
        "repo": client.repo_name,
        "objective": f"{session} edits",
        "baseCommit": "HEAD",
        "paths": list(paths),
        "agent": {"id": session, "name": session, "sessionId": session},
        "advisory": advisory,
    }
    opened: dict = client.open_claim(body)["claim"]
    return opened


def test_both_clients_name_the_repository_and_answer_the_same_claim_shape(
    client: Client,
) -> None:
    claim = _open(client, "s1", "docs/**")

    assert client.repo_name == "repo"
    assert claim["status"] == "active"
    assert claim["paths"] == ["docs/**"]
    assert isinstance(claim["memoryImpacts"], list)
    assert client.get_claim(claim["id"])["claim"]["revision"] == claim["revision"]
    (repo,) = client.repos()["repos"]
    assert repo["headOid"] == current_oid(Path(str(repo["path"])), "HEAD")


def test_both_clients_refuse_a_malformed_body_naming_the_field(client: Client) -> None:
    with pytest.raises(errors.ValidationError) as caught:
        client.open_claim({"repo": client.repo_name, "objective": "", "baseCommit": "HEAD"})

    assert caught.value.field == "objective"
    assert caught.value.detail.startswith("objective: ")


def test_both_clients_refuse_an_events_page_beyond_the_limit(client: Client) -> None:
    with pytest.raises(errors.ValidationError) as caught:
        client.events(since=0, limit=5000)

    assert caught.value.field == "limit"


def test_both_clients_raise_the_conflict_of_a_stale_revision(client: Client) -> None:
    claim = _open(client, "s1", "docs/**")

    with pytest.raises(errors.RevisionConflict) as caught:
        client.suspend(claim["id"], expected_claim_revision=claim["revision"] - 1)

    assert caught.value.extra["current"]["id"] == claim["id"]


def test_session_claims_lists_only_the_sessions_holding_claims_oldest_first(
    client: Client,
) -> None:
    first = _open(client, "s1", "docs/a.md", advisory=True)
    second = _open(client, "s1", "src/**")
    _open(client, "s2", "tests/**")
    client.abandon(first["id"], expected_claim_revision=first["revision"], reason="done")

    held = client.session_claims("s1")["claims"]

    assert [c["id"] for c in held] == [second["id"]]
    assert client.session_claims("nobody")["claims"] == []


def test_a_returned_record_is_the_callers_own_copy(client: Client) -> None:
    claim = _open(client, "s1", "docs/**")
    claim["paths"].append("src/**")

    assert client.get_claim(claim["id"])["claim"]["paths"] == ["docs/**"]


def test_both_clients_answer_the_typed_records_of_the_wire_module(client: Client) -> None:
    from pydantic import TypeAdapter

    from detente.operations import wire

    opened = client.open_claim(
        {
            "repo": client.repo_name,
            "objective": "typed",
            "baseCommit": "HEAD",
            "paths": ["src/**"],
            "agent": {"id": "s1", "name": "s1", "sessionId": "s1"},
        }
    )
    claim = opened["claim"]
    renewed = client.renew(
        claim["id"],
        expected_lease_revision=claim["lease"]["revision"],
        expected_claim_revision=claim["revision"],
        ttl_seconds=600,
    )
    answers: list[tuple[type, object]] = [
        (wire.ClaimView, opened),
        (wire.ClaimOut, renewed),
        (wire.ClaimView, client.get_claim(claim["id"])),
        (wire.ClaimList, client.list_claims(repo=client.repo_name)),
        (wire.EventPage, client.events(since=0, limit=10)),
        (wire.RepoList, client.repos()),
        (wire.Health, client.health()),
        (wire.Audit, client.audit_verify()),
    ]
    for record, answer in answers:
        # Every declared member is present with its declared type; nothing undeclared.
        adapter = TypeAdapter(record)
        assert adapter.dump_python(adapter.validate_python(answer)) == answer
        declared = set(record.__annotations__)
        assert set(answer) <= declared, (record.__name__, set(answer) - declared)  # type: ignore[arg-type]
    assert renewed["claim"]["lease"]["ttlSeconds"] == 600
