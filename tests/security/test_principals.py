"""Principals namespaced by scheme: an OIDC subject and a key of the same name are two
principals; no credential takes a reserved name; an e-mail names a principal only once
verified; an optional maximum token lifetime."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from api.conftest import running
from detente.client.signing import SignatureAuth
from detente.clock import SystemClock
from detente.errors import ValidationError
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.security.signatures import KeyRegistry, SignedRequestVerifier
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from oidc_issuer import Issuer, running_issuer

from support import claim_body, counting_ids

AUD = "detente-test"


@dataclass
class Served:
    base: str
    issuer: Issuer
    bot1: SignatureAuth


def _pem(key: ed25519.Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


@contextlib.contextmanager
def served(tmp_path: Path, **oidc: Any) -> Iterator[Served]:
    """A server taking OIDC tokens and signed requests; the key ``bot1`` is registered."""
    key = ed25519.Ed25519PrivateKey.generate()
    registry = KeyRegistry(tmp_path / "principals.json")
    registry.add("bot1", _pem(key))
    service = Service(
        SqliteStore(tmp_path / "d.db"), SystemClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    with running_issuer("RS256") as issuer:
        gate = AuthGate(
            oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD, **oidc)),
            keys=SignedRequestVerifier(registry, service.clock.now),
        )
        with running(service, auth=gate) as base:
            yield Served(base, issuer, SignatureAuth(key, "bot1"))
    service.store.close()


def _bearer(issuer: Issuer, sub: str, **claims: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {issuer.token(sub, aud=AUD, **claims)}"}


def test_an_oidc_subject_and_a_key_of_the_same_name_are_two_principals(tmp_path: Path) -> None:
    with served(tmp_path) as s, httpx.Client(timeout=20) as http:
        opened = http.post(f"{s.base}/v1/claims", json=claim_body("a.py"), auth=s.bot1)
        assert opened.status_code == 201, opened.text
        claim = opened.json()["claim"]
        changed = http.post(
            f"{s.base}/v1/claims/{claim['id']}/objective",
            json={"expectedClaimRevision": claim["revision"], "objective": "not yours"},
            headers=_bearer(s.issuer, "bot1"),
        )
        mine = http.post(
            f"{s.base}/v1/claims",
            json=claim_body("b.py", agent="bot1"),
            headers=_bearer(s.issuer, "bot1"),
        )
    assert claim["principal"] == "key:bot1"
    assert changed.status_code == 403 and changed.json()["owner"] == "key:bot1"
    assert mine.json()["claim"]["principal"] == "oidc:bot1"


@pytest.mark.parametrize("reserved", ["local", "system", "Local"])
def test_no_token_takes_a_reserved_name(tmp_path: Path, reserved: str) -> None:
    with served(tmp_path) as s:
        answer = httpx.post(
            f"{s.base}/v1/claims",
            json=claim_body("a.py"),
            headers=_bearer(s.issuer, reserved),
            timeout=20,
        )
    assert answer.status_code == 401
    assert "reserved" in answer.json()["detail"]


def test_no_key_is_registered_under_a_reserved_name(tmp_path: Path) -> None:
    registry = KeyRegistry(tmp_path / "principals.json")
    with pytest.raises(ValidationError) as caught:
        registry.add("system", _pem(ed25519.Ed25519PrivateKey.generate()))
    assert caught.value.field == "name"
    assert registry.list() == []


def test_an_email_names_a_principal_only_when_verified(tmp_path: Path) -> None:
    with served(tmp_path, principal_claim="email") as s, httpx.Client(timeout=20) as http:
        answers = {
            verified: http.post(
                f"{s.base}/v1/claims",
                json=claim_body(f"{verified}.py"),
                headers=_bearer(s.issuer, "u1", email="alice@example.com", **verified_claim),
            )
            for verified, verified_claim in (
                ("false", {"email_verified": False}),
                ("missing", {}),
                ("string", {"email_verified": "true"}),
                ("true", {"email_verified": True}),
            )
        }
    for refused in ("false", "missing", "string"):
        assert answers[refused].status_code == 401, refused
        assert "not verified" in answers[refused].json()["detail"]
    assert answers["true"].json()["claim"]["principal"] == "oidc:alice@example.com"


def test_a_token_living_longer_than_the_maximum_is_refused(tmp_path: Path) -> None:
    with served(tmp_path, max_lifetime_seconds=3600) as s, httpx.Client(timeout=20) as http:
        long = http.post(
            f"{s.base}/v1/claims",
            json=claim_body("a.py"),
            headers={
                "Authorization": f"Bearer {s.issuer.token('alice', aud=AUD, expires_in=7200)}"
            },
        )
        short = http.post(
            f"{s.base}/v1/claims",
            json=claim_body("b.py"),
            headers={"Authorization": f"Bearer {s.issuer.token('alice', aud=AUD, expires_in=600)}"},
        )
    assert long.status_code == 401 and "at most 3600 s" in long.json()["detail"]
    assert short.status_code == 201, short.text
