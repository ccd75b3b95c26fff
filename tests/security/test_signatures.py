"""RFC 9421 signed requests: registered Ed25519 keys, the 300 s window, replayed nonces."""

from __future__ import annotations

import base64
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from detente.client.signing import SignatureAuth
from detente.clock import FakeClock, SystemClock
from detente.errors import Unauthenticated, ValidationError
from detente.security.authn import HttpRequest
from detente.security.signatures import KeyRegistry, SignedRequestVerifier, fingerprint

URL = "https://detente.example.com/v1/claims"


def _pem(key: ed25519.Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def key() -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.generate()


@pytest.fixture
def registry(tmp_path: Path, key: ed25519.Ed25519PrivateKey) -> KeyRegistry:
    registry = KeyRegistry(tmp_path / "principals.json")
    registry.add("ci-bot", _pem(key), ["integrate"])
    return registry


def _signed(
    key: ed25519.Ed25519PrivateKey,
    clock: FakeClock,
    *,
    key_id: str = "ci-bot",
    body: bytes = b'{"repo":"demo"}',
    url: str = URL,
) -> httpx.Request:
    request = httpx.Request("POST", url, content=body, headers={"Content-Type": "application/json"})
    SignatureAuth(key, key_id).sign(request, created=clock.now())
    return request


def _seen(
    request: httpx.Request, *, body: bytes | None = None, url: str | None = None
) -> HttpRequest:
    return HttpRequest(
        method=request.method,
        target_uri=url or str(request.url),
        headers={k.lower(): v for k, v in request.headers.items()},
        body=request.content if body is None else body,
    )


def _refusal(verifier: SignedRequestVerifier, request: HttpRequest) -> str:
    with pytest.raises(Unauthenticated) as caught:
        verifier.verify(request)
    assert caught.value.challenge.startswith("Signature")
    return caught.value.detail


def test_a_signed_request_names_the_registered_principal_and_its_key_fingerprint(
    registry: KeyRegistry, key: ed25519.Ed25519PrivateKey, clock: FakeClock
) -> None:
    request = _signed(key, clock)
    principal = SignedRequestVerifier(registry, clock.now).verify(_seen(request))
    assert principal.name == "key:ci-bot" and principal.via == "key"
    assert principal.key_fingerprint == fingerprint(key.public_key())
    assert "content-digest" in request.headers["signature-input"]
    assert "nonce=" in request.headers["signature-input"]


def test_the_same_signed_request_twice_is_a_replay(
    registry: KeyRegistry, key: ed25519.Ed25519PrivateKey, clock: FakeClock
) -> None:
    verifier = SignedRequestVerifier(registry, clock.now)
    request = _seen(_signed(key, clock))
    verifier.verify(request)
    assert "already used" in _refusal(verifier, request)


def test_a_signature_created_outside_the_300_second_window_is_stale(
    registry: KeyRegistry, key: ed25519.Ed25519PrivateKey, clock: FakeClock
) -> None:
    verifier = SignedRequestVerifier(registry, clock.now)
    request = _seen(_signed(key, clock))
    clock.advance(301)
    assert "at most 300 s" in _refusal(verifier, request)
    ahead = _seen(_signed(key, FakeClock(clock.now() + timedelta(seconds=301))))
    assert "at most 300 s" in _refusal(verifier, ahead)


def test_a_signature_up_to_300_seconds_ahead_of_the_server_clock_verifies(
    registry: KeyRegistry, key: ed25519.Ed25519PrivateKey
) -> None:
    # The server's clock is the real time here: the library's own 5 s wall-clock check
    # refused a signature 10 s ahead although the window is 300 s on either side.
    clock = FakeClock(SystemClock().now())
    verifier = SignedRequestVerifier(registry, clock.now)
    for ahead in (10, 299):
        later = FakeClock(clock.now() + timedelta(seconds=ahead))
        assert verifier.verify(_seen(_signed(key, later))).name == "key:ci-bot"
    too_far = _seen(_signed(key, FakeClock(clock.now() + timedelta(seconds=301))))
    assert "at most 300 s" in _refusal(verifier, too_far)


def test_a_changed_body_method_or_target_does_not_verify(
    registry: KeyRegistry, key: ed25519.Ed25519PrivateKey, clock: FakeClock
) -> None:
    verifier = SignedRequestVerifier(registry, clock.now)
    request = _signed(key, clock)
    assert "does not verify" in _refusal(verifier, _seen(request, body=b'{"repo":"evil"}'))
    assert "does not verify" in _refusal(verifier, _seen(request, url=URL + "/clm_1/renew"))
    other = _seen(request)
    forged = HttpRequest("PUT", other.target_uri, other.headers, other.body)
    assert "does not verify" in _refusal(verifier, forged)


def test_a_tampered_signature_or_an_unknown_key_does_not_verify(
    registry: KeyRegistry, key: ed25519.Ed25519PrivateKey, clock: FakeClock
) -> None:
    verifier = SignedRequestVerifier(registry, clock.now)
    request = _seen(_signed(key, clock))
    label, _, value = request.headers["signature"].partition("=:")
    raw = bytearray(base64.b64decode(value.rstrip(":")))
    raw[0] ^= 1
    headers = {**request.headers, "signature": f"{label}=:{base64.b64encode(raw).decode()}:"}
    assert "does not verify" in _refusal(
        verifier, HttpRequest(request.method, request.target_uri, headers, request.body)
    )
    stranger = ed25519.Ed25519PrivateKey.generate()
    assert "does not verify" in _refusal(verifier, _seen(_signed(stranger, clock, key_id="eve")))
    impostor = _seen(_signed(stranger, clock))  # a registered name, another key
    assert "does not verify" in _refusal(verifier, impostor)


def test_a_request_without_a_signature_covering_the_digest_is_refused(
    registry: KeyRegistry, key: ed25519.Ed25519PrivateKey, clock: FakeClock
) -> None:
    request = _seen(_signed(key, clock))
    headers = {k: v for k, v in request.headers.items() if k != "content-digest"}
    verifier = SignedRequestVerifier(registry, clock.now)
    _refusal(verifier, HttpRequest(request.method, request.target_uri, headers, request.body))


def test_the_registry_keeps_fingerprints_and_roles_and_refuses_bad_input(
    tmp_path: Path, registry: KeyRegistry, key: ed25519.Ed25519PrivateKey
) -> None:
    [entry] = KeyRegistry(registry.path).list()
    assert entry.fingerprint == fingerprint(key.public_key()) and entry.roles == ("integrate",)
    with pytest.raises(ValidationError) as caught:
        registry.add("bot", b"not a key")
    assert caught.value.field == "ed25519-public-key"
    with pytest.raises(ValidationError) as caught:
        registry.add("bot", _pem(key), ["superuser"])
    assert caught.value.field == "role"
    with pytest.raises(ValidationError) as caught:
        registry.add("two words", _pem(key))
    assert caught.value.field == "name"
    assert [e.name for e in registry.list()] == ["ci-bot"]
