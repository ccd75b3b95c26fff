"""An authenticating server: 401 without valid credentials, 403 for another's records.

A real OIDC issuer (``tests/oidc_issuer.py``) and a real uvicorn server; the operations are
read from the server's own ``/openapi.json``, so a new mutating route is covered the day it
is added.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from api.conftest import running
from detente.client.signing import SignatureAuth
from detente.clock import FakeClock
from detente.config import RateLimit
from detente.operations.catalog import OPERATIONS
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.security.ratelimit import RateLimiter
from detente.security.signatures import KeyRegistry, SignedRequestVerifier, fingerprint
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from oidc_issuer import Issuer, running_issuer

from support import claim_body, counting_ids, minimal_instance

AUD = "detente-test"
MUTATING = ("post", "put", "patch", "delete")
#: ``(method, path) -> operation name`` (the catalog declares every operation).
_ROUTE_NAMES = {(op.method, op.path): op.name for op in OPERATIONS}


class Table:
    """A ``[roles]`` table: role -> principal names and ``group:NAME`` entries."""

    def __init__(self, **grants: list[str]) -> None:
        self.grants = grants

    def allows(self, role: str, principal: str, groups: Iterable[str] = ()) -> bool:
        entries = self.grants.get(role, [])
        return principal in entries or any(f"group:{g}" in entries for g in groups)


ROLES = Table(
    claim=["alice", "bob", "carol", "group:release"],
    integrate=["group:release"],
    deploy=["group:release"],
    arbitrate=["judy"],
    admin=["root"],
)


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer("RS256") as it:
        yield it


@pytest.fixture
def base(issuer: Issuer, tmp_path: Path) -> Iterator[str]:
    service = Service(
        SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    gate = AuthGate(
        oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)),
        roles=ROLES,
    )
    with running(service, auth=gate) as url:
        yield url


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _schema(base: str) -> dict[str, Any]:
    return httpx.get(f"{base}/openapi.json", timeout=10).json()


def _operations(base: str) -> list[tuple[str, str, Any, str]]:
    """``(method, path template, minimal body, name)`` of every mutating operation."""
    spec = _schema(base)
    components = spec.get("components", {}).get("schemas", {})
    out = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            if method not in MUTATING:
                continue
            body = None
            if "requestBody" in op:
                content = op["requestBody"]["content"]["application/json"]["schema"]
                body = minimal_instance(content, components)
            out.append((method.upper(), path, body, _ROUTE_NAMES[(method.upper(), path)]))
    assert len(out) >= 30, "the API has at least 30 mutating operations"
    return out


def _call(
    base: str, method: str, path: str, body: Any, headers: dict[str, str], **ids: str
) -> httpx.Response:
    url = base + path.format(
        claim_id=ids.get("claim_id", "clm_none"),
        meeting_id=ids.get("meeting_id", "mtg_none"),
        proposal_id="prp_none",
        patch_id="pat_none",
        env="staging",
        name="build",
        session_id=ids.get("session_id", "ses_none"),
    )
    if isinstance(body, dict) and "claimId" in body and "claim_id" in ids:
        body = {**body, "claimId": ids["claim_id"]}
    if (
        isinstance(body, dict)
        and path.endswith(("/renew", "/release"))
        and "token" in ids
        and "resources" in path
    ):
        body = {**body, "fencingToken": int(ids["token"])}  # another's grant of ``build``
    if isinstance(body, dict) and body.get("patch") == {}:
        body = {**body, "patch": {"body": "x"}}  # exactly one of body or diff
    return httpx.request(method, url, json=body, headers=headers, timeout=10)


def _tampered(token: str) -> str:
    header, payload, signature = token.split(".")
    claims = base64.urlsafe_b64decode(payload + "==").replace(b'"bob"', b'"ali"')
    return f"{header}.{base64.urlsafe_b64encode(claims).rstrip(b'=').decode()}.{signature}"


@pytest.mark.slow  # an exhaustive sweep
def test_every_mutating_operation_refuses_missing_expired_foreign_and_tampered_tokens(
    base: str, issuer: Issuer
) -> None:
    credentials = {
        "no credentials": {},
        "expired token": _bearer(issuer.token("bob", expires_in=-120)),
        "wrong audience": _bearer(issuer.token("bob", aud="another-api")),
        "tampered signature": _bearer(_tampered(issuer.token("bob"))),
        "another scheme": {"Authorization": "Basic Ym9iOnNlY3JldA=="},
    }
    failures = []
    for method, path, body, name in _operations(base):
        for why, headers in credentials.items():
            response = _call(base, method, path, body, headers)
            problem = response.json()
            if (
                response.status_code != 401
                or problem.get("code") != "unauthenticated"
                or not response.headers.get("www-authenticate", "").startswith("Bearer")
                or response.headers["content-type"] != "application/problem+json"
            ):
                failures.append(f"{name} with {why}: {response.status_code} {problem}")
    assert failures == []


def test_reads_need_credentials_too_but_health_and_the_schema_do_not(
    base: str, issuer: Issuer
) -> None:
    refused = httpx.get(f"{base}/v1/claims", timeout=10)
    assert refused.status_code == 401
    metadata_url = f"{base}/.well-known/oauth-protected-resource"
    assert f'resource_metadata="{metadata_url}"' in refused.headers["www-authenticate"]
    metadata = httpx.get(metadata_url, timeout=10).json()
    assert metadata["authorization_servers"] == [issuer.url] and metadata["resource"] == base
    shell = httpx.get(f"{base}/", timeout=10)
    assert shell.status_code == 200 and "auth-token" in shell.text
    assert httpx.get(f"{base}/healthz", timeout=10).status_code == 200
    assert httpx.get(f"{base}/openapi.json", timeout=10).status_code == 200
    ok = httpx.get(f"{base}/v1/claims", headers=_bearer(issuer.token("bob")), timeout=10)
    assert ok.status_code == 200


def _open(base: str, token: str, *paths: str) -> dict[str, Any]:
    response = httpx.post(
        f"{base}/v1/claims", json=claim_body(*paths), headers=_bearer(token), timeout=10
    )
    assert response.status_code == 201, response.text
    return response.json()


def test_a_claim_records_its_principal_and_every_event_its_actor(base: str, issuer: Issuer) -> None:
    opened = _open(base, issuer.token("alice"), "src/a.py")
    assert opened["claim"]["principal"] == "oidc:alice"
    events = httpx.get(
        f"{base}/v1/events", headers=_bearer(issuer.token("alice")), timeout=10
    ).json()["events"]
    assert events and {e["data"]["actor"]["principal"] for e in events} == {"oidc:alice"}
    assert {e["data"]["actor"]["via"] for e in events} == {"oidc"}
    shell = httpx.get(f"{base}/", timeout=10)  # public: the dashboard's shell shows no record
    assert shell.status_code == 200 and opened["claim"]["objective"] not in shell.text
    assert httpx.get(f"{base}/dashboard/panels", timeout=10).status_code == 401


def test_another_principals_token_is_forbidden_on_every_operation_it_does_not_own(
    base: str, issuer: Issuer
) -> None:
    alice = _open(base, issuer.token("alice"), "src/shared.py")
    carol = _open(base, issuer.token("carol"), "src/shared.py")
    grant = httpx.post(
        f"{base}/v1/resources/build/acquire",
        json={"ttlSeconds": 600},
        headers=_bearer(issuer.token("alice")),
        timeout=10,
    ).json()["grant"]
    registered = httpx.post(
        f"{base}/v1/agents",
        json={"sessionId": "alice-s1", "agentName": "alice", "ttlSeconds": 60},
        headers=_bearer(issuer.token("alice")),
        timeout=10,
    )
    assert registered.status_code == 201, registered.text
    ids = {
        "claim_id": alice["claim"]["id"],
        "meeting_id": carol["meeting"]["id"],
        "token": str(grant["fencingToken"]),
        "session_id": "alice-s1",
    }
    needs_no_more_than_claim = {
        "open_claim",
        "takeover",
        "register_agent",
        "readiness",
        "register_document",
        "render",
        "reconcile",
        "pre_receive",
        "pre_commit",
        "check_edit",
        "reconcile_intents",
        "discard_patch",  # needs a patch of alice's
        "acquire_resource",  # a slot of one's own (bob waits behind alice, or is busy)
        "declare_resource",  # a new resource (expectedRevision 0)
        "next_number",
    }
    bob = _bearer(issuer.token("bob"))
    before = httpx.get(f"{base}/v1/claims/{ids['claim_id']}", headers=bob, timeout=10).json()
    mallory = _bearer(issuer.token("mallory"))  # authenticated, holds no role
    failures = []
    for method, path, body, name in _operations(base):
        for who, headers in (("mallory", mallory), ("bob", bob)):
            if who == "bob" and name in needs_no_more_than_claim:
                continue
            response = _call(base, method, path, body, headers, **ids)
            if response.status_code != 403 or response.json().get("code") != "forbidden":
                failures.append(f"{name} by {who}: {response.status_code} {response.text}")
    assert failures == [], "\n".join(failures)
    after = httpx.get(f"{base}/v1/claims/{ids['claim_id']}", headers=bob, timeout=10).json()
    assert after["claim"] == before["claim"]  # nothing refused changed anything


def test_the_claims_principal_may_renew_it_and_an_admin_may_too(base: str, issuer: Issuer) -> None:
    claim = _open(base, issuer.token("alice"), "src/a.py")["claim"]
    for who in ("alice", "root"):
        renewed = httpx.post(
            f"{base}/v1/claims/{claim['id']}/renew",
            json={
                "expectedLeaseRevision": claim["lease"]["revision"],
                "expectedClaimRevision": claim["revision"],
                "ttlSeconds": 120,
            },
            headers=_bearer(issuer.token(who)),
            timeout=10,
        )
        assert renewed.status_code == 200, renewed.text
        claim = renewed.json()["claim"]
    assert claim["principal"] == "oidc:alice"


def test_deploying_needs_the_deploy_role_given_to_a_group(base: str, issuer: Issuer) -> None:
    claim = _open(base, issuer.token("rita", groups=["release"]), "src/a.py")["claim"]
    body = {"claimId": claim["id"], "commitOid": "b" * 40, "expectedPrevCommitOid": None}
    refused = httpx.post(
        f"{base}/v1/deployments/staging", json=body, headers=_bearer(issuer.token("alice"))
    )
    assert refused.status_code == 403 and refused.json()["role"] == "deploy"
    allowed = httpx.post(
        f"{base}/v1/deployments/staging",
        json=body,
        headers=_bearer(issuer.token("rita", groups=["release"])),
        timeout=10,
    )
    assert allowed.status_code != 403, allowed.text


# ---------------------------------------------------------------------------- signed requests


@pytest.fixture
def signed(issuer: Issuer, tmp_path: Path) -> Iterator[tuple[str, FakeClock, Any]]:
    """A server accepting bearer tokens and signed requests; yields (url, clock, key)."""
    key = ed25519.Ed25519PrivateKey.generate()
    registry = KeyRegistry(tmp_path / "principals.json")
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    registry.add("ci-bot", pem, ["claim"])  # a role registered with the key
    clock = FakeClock()
    service = Service(
        SqliteStore(tmp_path / "d.db"), clock, [RepoConfig("demo")], ids=counting_ids()
    )
    gate = AuthGate(
        oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)),
        keys=SignedRequestVerifier(registry, clock.now),
        roles=ROLES,
    )
    with running(service, auth=gate) as url:
        yield url, clock, key


def _send_signed(
    base: str,
    method: str,
    path: str,
    body: Any,
    key: Any,
    clock: FakeClock,
    *,
    created_offset: int = 0,
    tamper: bool = False,
    replay: bool = False,
) -> httpx.Response:
    url = base + path.format(
        claim_id="clm_none",
        meeting_id="mtg_none",
        proposal_id="p",
        patch_id="p",
        env="staging",
        name="build",
        session_id="ses_none",
    )
    with httpx.Client(timeout=10) as http:
        request = http.build_request(method, url, json=body)
        when = clock.now() + timedelta(seconds=created_offset)
        SignatureAuth(key, "ci-bot").sign(request, created=when)
        if tamper:
            label, _, value = request.headers["signature"].partition("=:")
            raw = bytearray(base64.b64decode(value.rstrip(":")))
            raw[-1] ^= 1
            request.headers["signature"] = f"{label}=:{base64.b64encode(raw).decode()}:"
        if replay:
            first = http.send(request)
            assert first.status_code != 401, first.text
        return http.send(request)


@pytest.mark.slow  # an exhaustive sweep
def test_every_mutating_operation_refuses_bad_replayed_and_stale_signatures(
    signed: tuple[str, FakeClock, Any],
) -> None:
    base, clock, key = signed
    cases = {
        "bad signature": {"tamper": True},
        "replayed nonce": {"replay": True},
        "stale created": {"created_offset": -301},
        "created in the future": {"created_offset": 301},
    }
    failures = []
    for method, path, body, name in _operations(base):
        for why, how in cases.items():
            response = _send_signed(base, method, path, body, key, clock, **how)  # type: ignore[arg-type]
            if response.status_code != 401 or response.json().get("code") != "unauthenticated":
                failures.append(f"{name} with {why}: {response.status_code} {response.text}")
    assert failures == [], "\n".join(failures)


def test_a_signed_request_acts_as_its_registered_principal_with_the_key_fingerprint(
    signed: tuple[str, FakeClock, Any],
) -> None:
    base, clock, key = signed
    response = _send_signed(base, "POST", "/v1/claims", claim_body("src/a.py"), key, clock)
    assert response.status_code == 201, response.text
    assert response.json()["claim"]["principal"] == "key:ci-bot"
    with httpx.Client(timeout=10) as http:
        request = http.build_request("GET", f"{base}/v1/events")
        SignatureAuth(key, "ci-bot").sign(request, created=clock.now())
        events = http.send(request).json()["events"]
    assert {e["data"]["actor"]["via"] for e in events} == {"key"}
    assert {e["data"]["actor"]["keyFingerprint"] for e in events} == {fingerprint(key.public_key())}


# ---------------------------------------------------------------------------- browser origins


def test_a_state_changing_request_from_a_foreign_origin_is_forbidden_on_every_endpoint(
    tmp_path: Path,
) -> None:
    service = Service(
        SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    with running(service, allowed_origins=["https://ci.example.com"]) as base:
        failures = []
        for method, path, body, name in _operations(base):
            evil = _call(base, method, path, body, {"Origin": "https://evil.example"})
            if evil.status_code != 403 or evil.json().get("code") != "forbidden":
                failures.append(f"{name}: {evil.status_code}")
        assert failures == [], failures
        for origin in (base, "https://ci.example.com"):
            ok = httpx.post(
                f"{base}/v1/claims", json=claim_body("src/a.py"), headers={"Origin": origin}
            )
            assert ok.status_code == 201, ok.text
        body = claim_body("src/b.py")
        opaque = httpx.post(f"{base}/v1/claims", json=body, headers={"Origin": "null"})
        assert opaque.status_code == 403
        read = httpx.get(f"{base}/v1/claims", headers={"Origin": "https://evil.example"})
        assert read.status_code == 200
        assert len(httpx.get(f"{base}/v1/claims").json()["claims"]) == 2


def test_claim_opens_past_the_principals_limit_get_429_with_retry_after(
    issuer: Issuer, tmp_path: Path
) -> None:
    clock = FakeClock()
    service = Service(
        SqliteStore(tmp_path / "d.db"), clock, [RepoConfig("demo")], ids=counting_ids()
    )
    limits = {"claim-open": RateLimit(per_principal=1, window_seconds=60)}
    gate = AuthGate(
        oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)),
        roles=ROLES,
        limiter=RateLimiter(limits, clock.now),
    )
    with running(service, auth=gate) as base:
        _open(base, issuer.token("alice"), "src/a.py")
        clock.advance(20)
        refused = httpx.post(
            f"{base}/v1/claims",
            json=claim_body("src/b.py"),
            headers=_bearer(issuer.token("alice")),
            timeout=10,
        )
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
        assert refused.headers["retry-after"] == "40"
        _open(base, issuer.token("bob"), "src/c.py")  # bob has his own count
        clock.advance(40)
        _open(base, issuer.token("alice"), "src/b.py")


def test_an_idempotency_key_never_replays_another_principals_answer(
    base: str, issuer: Issuer
) -> None:
    body = claim_body("src/a.py")
    answers = []
    for who in ("alice", "bob"):
        headers = {**_bearer(issuer.token(who)), "Idempotency-Key": "same-key"}
        answers.append(httpx.post(f"{base}/v1/claims", json=body, headers=headers, timeout=10))
    assert [a.status_code for a in answers] == [201, 201]
    assert "idempotent-replayed" not in answers[1].headers
    assert [a.json()["claim"]["principal"] for a in answers] == ["oidc:alice", "oidc:bob"]


def test_an_arbitrator_may_resolve_a_meeting_a_participant_may_not(
    base: str, issuer: Issuer
) -> None:
    _open(base, issuer.token("alice"), "src/shared.py")
    carol = _open(base, issuer.token("carol"), "src/shared.py")
    meeting = carol["meeting"]
    body = {
        "expectedMeetingRevision": meeting["revision"],
        "resolution": {"type": "joint", "claimIds": meeting["participants"]},
    }
    url = f"{base}/v1/meetings/{meeting['id']}/resolve"
    refused = httpx.post(url, json=body, headers=_bearer(issuer.token("carol")), timeout=10)
    assert refused.status_code == 403 and refused.json()["role"] == "arbitrate"
    resolved = httpx.post(url, json=body, headers=_bearer(issuer.token("judy")), timeout=10)
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["meeting"]["status"] == "resolved"
