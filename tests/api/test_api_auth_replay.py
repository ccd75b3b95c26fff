"""Replay protection and idempotency that survive a server restart and span servers.

Used nonces of signed requests and kept ``Idempotency-Key`` answers live in the store's
replay ledger: a request replayed after a restart on the same SQLite file, PostgreSQL
database or etcd cluster is still refused (or, for a keyed retry, answered as the first
time), and two servers on one PostgreSQL database share both. Every "restart" is a new
``Service`` and a new store object over the same database, served by a new uvicorn server.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from api.conftest import running
from detente.client.signing import SignatureAuth
from detente.clock import FakeClock
from detente.security.authn import AuthGate
from detente.security.hosts import HostPolicy
from detente.security.signatures import KeyRegistry, SignedRequestVerifier
from detente.service import RepoConfig, Service
from detente.storage.factory import open_store
from detente.storage.ledger import ledger_for
from storage.servers import EtcdCluster, PostgresServer

from support import claim_body, counting_ids

#: The authority every signed request is addressed to (the ``Host`` it carries), so one
#: signed request is valid for every server of a test whatever its port.
PUBLIC = "http://detente.test"


@pytest.fixture(params=["sqlite", "postgres", "etcd"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'd.db'}"
    if request.param == "etcd":
        cluster: EtcdCluster = request.getfixturevalue("etcd_cluster")
        return cluster.url()
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.new_database()


@pytest.fixture
def key(tmp_path: Path) -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.generate()


@pytest.fixture
def registry(tmp_path: Path, key: ed25519.Ed25519PrivateKey) -> KeyRegistry:
    registry = KeyRegistry(tmp_path / "principals.json")
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    registry.add("ci-bot", pem)
    return registry


@contextmanager
def server(url: str, registry: KeyRegistry, clock: FakeClock) -> Iterator[str]:
    """One server process's worth: its own store object, service, verifier and app."""
    store = open_store(url)
    ids = counting_ids()
    service = Service(
        store, clock, [RepoConfig("demo")], ids=lambda p: f"{ids(p)}_{id(store) % 9973}"
    )
    verifier = SignedRequestVerifier(registry, clock.now, ledger=ledger_for(store))
    try:
        hosts = HostPolicy.from_public_url(PUBLIC)  # the name the requests are signed for
        with running(service, auth=AuthGate(keys=verifier), hosts=hosts) as base:
            yield base
    finally:
        store.close()


def _signed(key: ed25519.Ed25519PrivateKey, clock: FakeClock, *paths: str) -> httpx.Request:
    request = httpx.Request("POST", f"{PUBLIC}/v1/claims", json=claim_body(*paths))
    SignatureAuth(key, "ci-bot").sign(request, created=clock.now())
    return request


def _send(base: str, request: httpx.Request, **headers: str) -> httpx.Response:
    """Send ``request`` (as signed, ``Host`` kept) to the server at ``base``."""
    sent = httpx.Request(
        request.method,
        f"{base}{request.url.raw_path.decode()}",
        headers={**request.headers, **headers},
        content=request.content,
    )
    with httpx.Client(timeout=10) as http:
        return http.send(sent)


def _claims(base: str, key: ed25519.Ed25519PrivateKey, clock: FakeClock) -> list[object]:
    listing = httpx.Request("GET", f"{PUBLIC}/v1/claims")
    SignatureAuth(key, "ci-bot").sign(listing, created=clock.now())
    return list(_send(base, listing).json()["claims"])


def test_a_signed_request_replayed_after_a_server_restart_is_still_refused(
    store_url: str, registry: KeyRegistry, key: ed25519.Ed25519PrivateKey
) -> None:
    clock = FakeClock()
    captured = _signed(key, clock, "src/a.py")
    with server(store_url, registry, clock) as base:
        first = _send(base, captured)
    assert first.status_code == 201, first.text
    clock.advance(60)  # still inside the 300 s window
    with server(store_url, registry, clock) as base:
        replayed = _send(base, captured)
        fresh = _send(base, _signed(key, clock, "src/b.py"))
        claims = _claims(base, key, clock)
    assert replayed.status_code == 401
    assert replayed.json()["code"] == "unauthenticated"
    assert "nonce was already used" in replayed.json()["detail"]
    assert fresh.status_code == 201, fresh.text
    assert len(claims) == 2  # the replay changed nothing


def test_a_keyed_retry_after_a_server_restart_gets_the_original_answer(
    store_url: str, registry: KeyRegistry, key: ed25519.Ed25519PrivateKey
) -> None:
    clock = FakeClock()
    with server(store_url, registry, clock) as base:
        first = _send(base, _signed(key, clock, "src/a.py"), **{"Idempotency-Key": "retry-1"})
    assert first.status_code == 201, first.text
    with server(store_url, registry, clock) as base:
        retry = _send(base, _signed(key, clock, "src/a.py"), **{"Idempotency-Key": "retry-1"})
        other = _send(base, _signed(key, clock, "src/z.py"), **{"Idempotency-Key": "retry-1"})
        claims = _claims(base, key, clock)
    assert retry.status_code == 201
    assert retry.headers["idempotent-replayed"] == "true"
    assert retry.json() == first.json()
    assert other.status_code == 422 and other.json()["field"] == "Idempotency-Key"
    assert len(claims) == 1  # nothing ran twice


def test_two_servers_on_one_postgres_database_share_nonces_and_kept_answers(
    postgres_server: PostgresServer, registry: KeyRegistry, key: ed25519.Ed25519PrivateKey
) -> None:
    url = postgres_server.new_database()
    clock = FakeClock()
    captured = _signed(key, clock, "src/a.py")
    with server(url, registry, clock) as one, server(url, registry, clock) as two:
        accepted = _send(one, captured)
        replayed = _send(two, captured)
        keyed = {"Idempotency-Key": "across"}
        first = _send(two, _signed(key, clock, "src/k.py"), **keyed)
        retry = _send(one, _signed(key, clock, "src/k.py"), **keyed)
        claims = _claims(one, key, clock)
    assert accepted.status_code == 201, accepted.text
    assert replayed.status_code == 401 and "nonce" in replayed.json()["detail"]
    assert first.status_code == 201, first.text
    assert retry.headers.get("idempotent-replayed") == "true"
    assert retry.json() == first.json()
    assert len(claims) == 2
