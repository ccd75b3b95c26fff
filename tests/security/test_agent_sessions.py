"""Agent sessions belong to the principal that registered them: another principal cannot
renew, shorten (end) or work under them; an admin may."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from detente.clock import FakeClock
from detente.errors import ForbiddenError
from detente.operations.agents import GET_AGENT, REGISTER_AGENT, SESSION_CLAIMS
from detente.operations.claims import OPEN_CLAIM
from detente.operations.door import Operations
from detente.security.identity import Principal, acting_as
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

ALICE = Principal("oidc:alice", "oidc", roles=frozenset({"claim"}))
MALLORY = Principal("key:mallory", "key", roles=frozenset({"claim"}))
ROOT = Principal("oidc:root", "oidc", roles=frozenset({"admin"}))


@pytest.fixture
def operations(tmp_path: Path) -> Iterator[Operations]:
    service = Service(SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")])
    yield Operations(service)
    service.store.close()


def _register(ops: Operations, who: Principal, ttl: int, name: str = "claude") -> dict[str, Any]:
    body = {"sessionId": "s-alice", "agentName": name, "intent": "fix", "ttlSeconds": ttl}
    with acting_as(who):
        return dict(ops.call(REGISTER_AGENT, body=body)["agent"])


def _session(ops: Operations) -> dict[str, Any]:
    return dict(ops.call(GET_AGENT, path={"session_id": "s-alice"})["agent"])


def test_another_principal_may_not_re_register_a_session_to_end_it(
    operations: Operations,
) -> None:
    registered = _register(operations, ALICE, 600)

    with pytest.raises(ForbiddenError) as refused:
        _register(operations, MALLORY, 1, name="mallory")

    assert refused.value.extra["owner"] == "oidc:alice"
    after = _session(operations)
    assert registered["principal"] == after["principal"] == "oidc:alice"
    assert after["expiresAt"] == registered["expiresAt"] and after["status"] == "active"
    assert after["agentName"] == "claude"


def test_the_registrant_renews_its_session_and_an_admin_may_too(
    operations: Operations,
) -> None:
    _register(operations, ALICE, 600)
    renewed = _register(operations, ALICE, 900)
    by_admin = _register(operations, ROOT, 60)

    assert renewed["revision"] == 2 and renewed["ttlSeconds"] == 900
    assert by_admin["ttlSeconds"] == 60
    assert by_admin["principal"] == "oidc:alice"  # the owner stays the registrant


def test_another_principal_may_not_open_a_claim_under_the_session(
    operations: Operations,
) -> None:
    _register(operations, ALICE, 600)
    body = {
        "repo": "demo",
        "objective": "file work under alice's session",
        "baseCommit": "a" * 40,
        "paths": ["src/**"],
        "agent": {"id": "m", "name": "m", "sessionId": "s-alice"},
    }

    with acting_as(MALLORY), pytest.raises(ForbiddenError):
        operations.call(OPEN_CLAIM, body=body)
    with acting_as(ALICE):
        opened = operations.call(OPEN_CLAIM, body=body)

    assert opened["claim"]["agent"]["sessionId"] == "s-alice"


def test_a_sessions_claims_are_the_acting_principals_only(operations: Operations) -> None:
    # An unregistered session id is only a label its client chose: two principals may
    # both name it; each sees (and a harness hook works under) only its own claims.
    def body(path: str) -> dict[str, Any]:
        return {
            "repo": "demo",
            "objective": f"work on {path}",
            "baseCommit": "a" * 40,
            "paths": [path],
            "agent": {"id": "a", "name": "a", "sessionId": "claude-shared"},
        }

    with acting_as(ALICE):
        alices = operations.call(OPEN_CLAIM, body=body("src/alice/**"))["claim"]["id"]
    with acting_as(MALLORY):
        mallorys = operations.call(OPEN_CLAIM, body=body("src/mallory/**"))["claim"]["id"]

    path = {"session_id": "claude-shared"}
    with acting_as(_reader(MALLORY)):
        seen_by_mallory = operations.call(SESSION_CLAIMS, path=path)["claims"]
    with acting_as(_reader(ALICE)):
        seen_by_alice = operations.call(SESSION_CLAIMS, path=path)["claims"]

    assert [c["id"] for c in seen_by_mallory] == [mallorys]
    assert [c["id"] for c in seen_by_alice] == [alices]


def _reader(who: Principal) -> Principal:
    return Principal(who.name, who.via, roles=who.roles | {"read"})
