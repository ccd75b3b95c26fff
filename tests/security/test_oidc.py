"""OIDC bearer tokens against a real issuer (discovery + JWKS over HTTP on 127.0.0.1)."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import jwt
import pytest

from detente.errors import IssuerUnavailable, Unauthenticated, ValidationError
from detente.security.oidc import OidcSettings, OidcVerifier
from oidc_issuer import Issuer, running_issuer

AUD = "detente-test"


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer("RS256", "ES256", "EdDSA") as it:
        yield it


def _verifier(issuer: Issuer, **kw: object) -> OidcVerifier:
    return OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD, **kw))  # type: ignore[arg-type]


def _refusal(verifier: OidcVerifier, token: str) -> Unauthenticated:
    with pytest.raises(Unauthenticated) as caught:
        verifier.verify(token)
    return caught.value


@pytest.mark.parametrize("alg", ["RS256", "ES256", "EdDSA"])
def test_a_token_signed_with_each_accepted_algorithm_names_its_principal(
    issuer: Issuer, alg: str
) -> None:
    kid = next(k for k, (a, _) in issuer.keys.items() if a == alg)
    token = issuer.token("alice@example.com", kid=kid, groups=["backend", "oncall"])
    principal = _verifier(issuer).verify(token)
    assert principal.name == "oidc:alice@example.com" and principal.via == "oidc"
    assert principal.groups == {"backend", "oncall"}


def test_the_principal_and_groups_claims_are_configurable(issuer: Issuer) -> None:
    token = issuer.token("u-123", email="bob@example.com", email_verified=True, teams="platform")
    principal = _verifier(issuer, principal_claim="email", groups_claim="teams").verify(token)
    assert principal.name == "oidc:bob@example.com" and principal.groups == {"platform"}


def test_keys_are_fetched_once_and_again_when_a_token_names_an_unknown_kid(
    issuer: Issuer,
) -> None:
    verifier = _verifier(issuer, refresh_cooldown_seconds=0)
    verifier.verify(issuer.token())
    verifier.verify(issuer.token())
    assert issuer.fetches == 1
    rotated = issuer.rotate("ES256")
    assert verifier.verify(issuer.token("carol", kid=rotated)).name == "oidc:carol"
    assert issuer.fetches == 2


def test_made_up_key_ids_do_not_make_the_server_refetch_within_the_cooldown(
    issuer: Issuer,
) -> None:
    verifier = _verifier(issuer)  # the default cooldown: 30 s between forced refreshes
    verifier.verify(issuer.token())
    secret = issuer.rotate("RS256", publish=False)
    for _ in range(3):
        _refusal(verifier, issuer.token(kid=secret))
    assert issuer.fetches <= 2


def test_a_key_the_issuer_does_not_publish_is_refused(issuer: Issuer) -> None:
    secret = issuer.rotate("RS256", publish=False)
    refusal = _refusal(_verifier(issuer), issuer.token(kid=secret))
    assert "not published" in refusal.detail and 'error="invalid_token"' in refusal.challenge


def test_an_expired_token_is_refused_beyond_the_60_second_leeway_only(issuer: Issuer) -> None:
    verifier = _verifier(issuer)
    assert verifier.verify(issuer.token(expires_in=-30)).name == "oidc:alice"
    assert "expired" in _refusal(verifier, issuer.token(expires_in=-120)).detail


def test_a_token_not_yet_valid_is_refused(issuer: Issuer) -> None:
    assert "not valid yet" in _refusal(_verifier(issuer), issuer.token(not_before=600)).detail


def test_a_token_for_another_audience_or_issuer_is_refused(issuer: Issuer) -> None:
    verifier = _verifier(issuer)
    assert "audience" in _refusal(verifier, issuer.token(aud="another-service")).detail
    assert "issued by" in _refusal(verifier, issuer.token(iss="https://evil.example")).detail


def test_a_tampered_token_is_refused(issuer: Issuer) -> None:
    header, payload, signature = issuer.token("alice").split(".")
    claims = base64.urlsafe_b64decode(payload + "==").replace(b'"alice"', b'"admin"')
    forged = base64.urlsafe_b64encode(claims).rstrip(b"=").decode()
    refusal = _refusal(_verifier(issuer), f"{header}.{forged}.{signature}")
    assert "signature" in refusal.detail


@pytest.mark.parametrize("alg", ["HS256", "none"])
def test_symmetric_and_unsigned_tokens_are_refused(issuer: Issuer, alg: str) -> None:
    kid = next(iter(issuer.keys))
    key = "a-shared-secret-of-at-least-32-bytes!!" if alg == "HS256" else None
    token = jwt.encode(
        {"iss": issuer.url, "aud": AUD, "sub": "alice", "exp": 2**40},
        key,
        algorithm=alg,
        headers={"kid": kid},
    )
    assert "not accepted" in _refusal(_verifier(issuer), token).detail


def test_garbage_is_not_a_token(issuer: Issuer) -> None:
    assert "not a JWT" in _refusal(_verifier(issuer), "not-a-token").detail


def _unavailable(verifier: OidcVerifier, token: str) -> IssuerUnavailable:
    with pytest.raises(IssuerUnavailable) as info:
        verifier.verify(token)
    return info.value


def test_an_unreachable_issuer_is_unavailable_naming_the_discovery_url_not_a_refusal(
    issuer: Issuer,
) -> None:
    verifier = OidcVerifier(OidcSettings(issuer="http://127.0.0.1:9", audience=AUD))
    down = _unavailable(verifier, issuer.token())
    assert down.code == "issuer_unavailable"
    assert "127.0.0.1:9/.well-known/openid-configuration" in down.detail


@pytest.mark.parametrize(
    ("path", "fault", "named"),
    [
        ("/.well-known/openid-configuration", "500", "discovery document"),
        ("/.well-known/openid-configuration", "not-json", "discovery document"),
        ("/jwks", "500", "key set"),
        ("/jwks", "not-json", "key set"),
        ("/jwks", "no-keys", "key set"),
    ],
)
def test_a_broken_discovery_document_or_key_set_is_unavailable_not_a_refusal(
    issuer: Issuer, path: str, fault: str, named: str
) -> None:
    issuer.broken[path] = fault
    down = _unavailable(_verifier(issuer, discovery_retry_seconds=0), issuer.token())
    assert down.code == "issuer_unavailable"
    assert named in down.detail
    assert down.retry_after > 0


def test_after_a_failed_discovery_the_issuer_is_not_asked_again_within_the_retry_time(
    issuer: Issuer,
) -> None:
    issuer.broken["/.well-known/openid-configuration"] = "500"
    verifier = _verifier(issuer)  # the default: 5 s before discovery is tried again
    for _ in range(3):
        _unavailable(verifier, issuer.token())
    assert issuer.discoveries == 1


def test_the_issuer_coming_back_ends_the_outage(issuer: Issuer) -> None:
    issuer.broken["/jwks"] = "500"
    verifier = _verifier(issuer, discovery_retry_seconds=0)
    _unavailable(verifier, issuer.token())
    issuer.broken.clear()
    assert verifier.verify(issuer.token("dave")).name == "oidc:dave"


def test_an_unknown_kid_while_the_key_set_is_down_is_unavailable_not_a_refusal(
    issuer: Issuer,
) -> None:
    verifier = _verifier(issuer, refresh_cooldown_seconds=0)
    verifier.verify(issuer.token())
    rotated = issuer.rotate("EdDSA")
    issuer.broken["/jwks"] = "500"
    _unavailable(verifier, issuer.token(kid=rotated))
    issuer.broken.clear()
    assert verifier.verify(issuer.token("erin", kid=rotated)).name == "oidc:erin"


def test_settings_refuse_a_non_url_issuer_and_a_leeway_over_60_seconds() -> None:
    with pytest.raises(ValidationError):
        OidcSettings(issuer="example.com", audience=AUD)
    with pytest.raises(ValidationError):
        OidcSettings(issuer="https://id.example.com", audience=AUD, leeway_seconds=61)
