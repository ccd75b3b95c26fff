"""Reads with authentication on: the ``read`` role (by default whoever holds any role)
for claims, events, meetings and the rest; private memory documents listed to their
registrant only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from api.conftest import running
from detente.clock import FakeClock
from detente.config import Roles
from detente.errors import ForbiddenError
from detente.operations.door import Operations
from detente.operations.memory import LIST_DOCUMENTS, REGISTER_DOCUMENT
from detente.runtime import build_service
from detente.security.authn import AuthGate
from detente.security.identity import Principal, acting_as
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from oidc_issuer import Issuer, running_issuer

from support import claim_body, counting_ids

AUD = "detente-test"
READS = (
    "/v1/claims",
    "/v1/events",
    "/v1/meetings",
    "/v1/agents",
    "/v1/repos",
    "/v1/patches",
    "/v1/memory/documents?repo=demo",
    "/v1/audit/verify",
    "/v1/events/stream?since=0",
    "/dashboard/panels",
)


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer("RS256") as it:
        yield it


def _served(tmp_path: Path, issuer: Issuer, roles: Roles) -> tuple[Service, AuthGate]:
    service = Service(
        SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    gate = AuthGate(oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)), roles=roles)
    return service, gate


def _status(base: str, issuer: Issuer, who: str, path: str) -> int:
    headers = {"Authorization": f"Bearer {issuer.token(who, aud=AUD)}"}
    with httpx.Client(timeout=20) as http, http.stream("GET", base + path, headers=headers) as r:
        return r.status_code


def test_a_principal_without_a_role_reads_nothing_and_a_claimer_reads_everything(
    tmp_path: Path, issuer: Issuer
) -> None:
    service, gate = _served(tmp_path, issuer, Roles({"claim": ("alice",)}))
    with running(service, auth=gate) as base:
        token = {"Authorization": f"Bearer {issuer.token('alice', aud=AUD)}"}
        opened = httpx.post(f"{base}/v1/claims", json=claim_body("a.py"), headers=token)
        assert opened.status_code == 201, opened.text
        stranger = {path: _status(base, issuer, "mallory", path) for path in READS}
        alice = {path: _status(base, issuer, "alice", path) for path in READS}
    service.store.close()
    assert stranger == dict.fromkeys(READS, 403)
    assert alice == dict.fromkeys(READS, 200)


def test_a_read_entry_in_roles_names_the_readers(tmp_path: Path, issuer: Issuer) -> None:
    roles = Roles({"claim": ("alice",), "read": ("auditor",)})
    service, gate = _served(tmp_path, issuer, roles)
    with running(service, auth=gate) as base:
        answers = {who: _status(base, issuer, who, "/v1/events") for who in ("auditor", "alice")}
    service.store.close()
    assert answers == {"auditor": 200, "alice": 403}


def test_a_private_memory_document_is_listed_to_its_registrant_only(repo: Path) -> None:
    service = build_service([repo])
    ops = Operations(service)
    alice, bob, root = (
        Principal(f"oidc:{n}", "oidc", roles=frozenset({r, "read"}))
        for n, r in (("alice", "claim"), ("bob", "claim"), ("root", "admin"))
    )
    with acting_as(alice):
        ops.call(
            REGISTER_DOCUMENT, body={"repo": "demo", "path": "notes/alice.md", "class": "private"}
        )
        ops.call(
            REGISTER_DOCUMENT, body={"repo": "demo", "path": "AGENTS.md", "class": "generated"}
        )

    def listed(who: Principal) -> list[str]:
        with acting_as(who):
            docs = ops.call(LIST_DOCUMENTS, params={"repo": "demo"})["documents"]
        return [d["path"] for d in docs]

    seen = {p.name: listed(p) for p in (alice, bob, root)}
    service.store.close()
    assert seen == {
        "oidc:alice": ["AGENTS.md", "notes/alice.md"],
        "oidc:bob": ["AGENTS.md"],
        "oidc:root": ["AGENTS.md", "notes/alice.md"],
    }


def test_without_the_read_role_the_application_layer_refuses_a_read(tmp_path: Path) -> None:
    service = Service(SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")])
    nobody = Principal("oidc:nobody", "oidc")
    with acting_as(nobody), pytest.raises(ForbiddenError) as refused:
        Operations(service).call(LIST_DOCUMENTS, params={"repo": "demo"})
    service.store.close()
    assert refused.value.extra["role"] == "read"
