"""The HTTP client's credentials from the environment: DETENTE_TOKEN, DETENTE_KEY(_ID)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from api.conftest import running
from detente.client.credentials import credentials
from detente.client.http import HttpClient
from detente.clock import FakeClock
from detente.errors import Unauthenticated, ValidationError
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.security.signatures import KeyRegistry, SignedRequestVerifier
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from oidc_issuer import Issuer, running_issuer

from support import counting_ids

AUD = "detente-test"


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer("ES256") as it:
        yield it


@pytest.fixture
def ssh_key(tmp_path: Path) -> Path:
    """An OpenSSH Ed25519 key pair made by ssh-keygen (``key`` and ``key.pub``)."""
    key = tmp_path / "agent-key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
        check=True,
        capture_output=True,
    )
    return key


@pytest.fixture
def server(issuer: Issuer, tmp_path: Path, ssh_key: Path) -> Iterator[str]:
    registry = KeyRegistry(tmp_path / "principals.json")
    registry.add("ci-bot", Path(f"{ssh_key}.pub").read_bytes(), ["claim"])
    service = Service(
        SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    gate = AuthGate(
        oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)),
        # The real clock: a real client signs with the time it is sent at.
        keys=SignedRequestVerifier(registry, lambda: datetime.now(UTC)),
    )
    with running(service, auth=gate) as url:
        yield url


def test_a_client_sends_the_bearer_token_of_detente_token(
    server: str, issuer: Issuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DETENTE_TOKEN", issuer.token("alice"))
    client = HttpClient.to(server)
    try:
        assert client.list_claims()["claims"] == []
    finally:
        client.close()


def test_a_client_without_credentials_gets_unauthenticated(server: str) -> None:
    client = HttpClient.to(server)
    try:
        with pytest.raises(Unauthenticated) as caught:
            client.list_claims()
        assert caught.value.code == "unauthenticated"
    finally:
        client.close()


def test_a_client_signs_with_the_ssh_keygen_key_of_detente_key(
    server: str, ssh_key: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DETENTE_KEY", str(ssh_key))
    monkeypatch.setenv("DETENTE_KEY_ID", "ci-bot")
    client = HttpClient.to(server)
    try:
        assert client.list_claims()["claims"] == []
        assert client.list_claims()["claims"] == []  # a new nonce every request
    finally:
        client.close()


def test_a_key_without_its_id_or_a_file_that_is_no_key_is_a_clear_error(
    tmp_path: Path, ssh_key: Path
) -> None:
    with pytest.raises(ValidationError) as caught:
        credentials({"DETENTE_KEY": str(ssh_key)})
    assert caught.value.field == "DETENTE_KEY_ID"
    junk = tmp_path / "junk"
    junk.write_text("not a key")
    with pytest.raises(ValidationError) as caught:
        credentials({"DETENTE_KEY": str(junk), "DETENTE_KEY_ID": "x"})
    assert caught.value.field == "DETENTE_KEY"
    assert credentials({}) is None
