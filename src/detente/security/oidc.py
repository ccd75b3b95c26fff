"""OIDC bearer tokens: a JWT signed by the issuer, its keys found through discovery.

The issuer's keys are found as OpenID Connect Discovery 1.0 says:
``GET {issuer}/.well-known/openid-configuration`` names ``jwks_uri`` (and must name the
same ``issuer``); the JWK Set there is fetched once and cached, and fetched again when a
token names a ``kid`` the cache does not hold (the issuer rotated its keys). Tokens are
checked as RFC 9068 / RFC 7519 say: signature (RS256, ES256 or EdDSA only; never
``none`` nor an HMAC algorithm, whose "key" would be public), ``iss``, ``aud``, ``exp``
and ``nbf`` with at most 60 seconds of clock leeway. Verification is PyJWT's
(``jwt.decode`` and ``jwt.PyJWKClient``); this module wires it to detente's errors.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx
import jwt

from detente.errors import IssuerUnavailable, Unauthenticated, ValidationError
from detente.security.identity import RESERVED_NAMES, Principal, namespaced

__all__ = [
    "ALGORITHMS",
    "DISCOVERY_RETRY_SECONDS",
    "MAX_LEEWAY_SECONDS",
    "OidcSettings",
    "OidcVerifier",
]

#: The signature algorithms accepted (asymmetric only).
ALGORITHMS = ("RS256", "ES256", "EdDSA")
#: The most clock skew tolerated on ``exp``/``nbf``/``iat``, in seconds.
MAX_LEEWAY_SECONDS = 60
#: Seconds to wait for the issuer's discovery document or key set.
FETCH_TIMEOUT_SECONDS = 10.0
#: Default seconds after a failed discovery during which requests are answered 503
#: without asking the issuer again (also the ``Retry-After`` of that answer).
DISCOVERY_RETRY_SECONDS = 5


@dataclass(frozen=True)
class OidcSettings:
    """How to trust tokens (``detente serve --auth oidc ...``).

    Attributes:
        issuer: the issuer URL (``iss`` of every token; discovery is under it).
        audience: the audience tokens must name in ``aud`` (this server).
        principal_claim: the claim naming the principal (default ``sub``).
        groups_claim: the claim listing the principal's groups (default ``groups``).
        leeway_seconds: clock skew tolerated, 0 to 60.
        refresh_cooldown_seconds: the least time between two key-set downloads forced by
            unknown ``kid`` values (a flood of made-up key ids must not hammer the
            issuer; PyJWT's ``cooldown_duration``).
        discovery_retry_seconds: after a failed discovery, the time during which
            requests are answered ``issuer_unavailable`` without asking the issuer again.
        max_lifetime_seconds: the longest lifetime (``exp`` - ``iat``, or ``exp`` - now
            without ``iat``) of a token accepted, in seconds; None: any.
    """

    issuer: str
    audience: str
    principal_claim: str = "sub"
    groups_claim: str = "groups"
    leeway_seconds: int = MAX_LEEWAY_SECONDS
    refresh_cooldown_seconds: float = 30.0
    discovery_retry_seconds: float = DISCOVERY_RETRY_SECONDS
    max_lifetime_seconds: int | None = None

    def __post_init__(self) -> None:
        if not self.issuer.startswith(("https://", "http://")):
            raise ValidationError(
                f"--oidc-issuer must be an http(s) URL, got {self.issuer!r}", field="oidc-issuer"
            )
        if not self.audience:
            raise ValidationError("--oidc-audience must not be empty", field="oidc-audience")
        if not 0 <= self.leeway_seconds <= MAX_LEEWAY_SECONDS:
            raise ValidationError(
                f"the OIDC leeway must be 0..{MAX_LEEWAY_SECONDS} seconds", field="leeway"
            )


def _challenge(description: str) -> str:
    """An RFC 6750 ``WWW-Authenticate`` value for an invalid token."""
    quoted = description.replace("\\", "").replace('"', "'")
    return f'Bearer realm="detente", error="invalid_token", error_description="{quoted}"'


def _refused(detail: str) -> Unauthenticated:
    return Unauthenticated(detail, challenge=_challenge(detail))


class _KeySetClient(jwt.PyJWKClient):
    """PyJWT's key-set client with every failure to *read* the key set raised as
    :class:`IssuerUnavailable`, so the only :class:`jwt.PyJWKClientError` left is "no
    key with that ``kid``" (the caller's fault)."""

    def fetch_data(self) -> Any:
        try:
            return super().fetch_data()
        except (jwt.PyJWKClientError, ValueError) as exc:  # down, HTTP error, not JSON
            raise IssuerUnavailable(f"cannot read the issuer's key set {self.uri}: {exc}") from None

    def get_signing_keys(self, refresh: bool = False) -> list[jwt.PyJWK]:
        try:
            return super().get_signing_keys(refresh)
        except (jwt.PyJWKClientError, jwt.PyJWKSetError) as exc:  # no usable keys
            raise IssuerUnavailable(
                f"the issuer's key set {self.uri} holds no usable signing key: {exc}"
            ) from None


class OidcVerifier:
    """Verifies bearer tokens of one issuer (thread-safe; network only on a cache miss).

    Args:
        settings: issuer, audience and claim names.
    """

    def __init__(self, settings: OidcSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._keys: jwt.PyJWKClient | None = None
        #: ``(monotonic time, error)`` of the last failed discovery.
        self._failed: tuple[float, IssuerUnavailable] | None = None

    def _discover(self) -> jwt.PyJWKClient:
        with self._lock:
            if self._keys is not None:
                return self._keys
            if self._failed is not None:
                at, error = self._failed
                if time.monotonic() - at < self.settings.discovery_retry_seconds:
                    raise error
            try:
                self._keys = self._fetch_discovery()
            except IssuerUnavailable as exc:
                self._failed = (time.monotonic(), exc)
                raise
            self._failed = None
            return self._keys

    def _fetch_discovery(self) -> jwt.PyJWKClient:
        url = self.settings.issuer.rstrip("/") + "/.well-known/openid-configuration"

        def down(detail: str) -> IssuerUnavailable:
            return IssuerUnavailable(detail, retry_after=DISCOVERY_RETRY_SECONDS)

        try:
            response = httpx.get(url, timeout=FETCH_TIMEOUT_SECONDS)
            response.raise_for_status()
            document = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise down(f"cannot read the discovery document {url}: {exc}") from None
        if not isinstance(document, dict) or not isinstance(document.get("jwks_uri"), str):
            raise down(f"the discovery document at {url} names no jwks_uri")
        if document.get("issuer") != self.settings.issuer:
            raise down(f"the discovery document at {url} is for issuer {document.get('issuer')!r}")
        return _KeySetClient(
            document["jwks_uri"],
            timeout=FETCH_TIMEOUT_SECONDS,
            cooldown_duration=self.settings.refresh_cooldown_seconds,
        )

    def verify(self, token: str) -> Principal:
        """The principal a valid token names.

        Args:
            token: the compact JWT of an ``Authorization: Bearer`` header.

        Returns:
            ``Principal(name="oidc:<principal claim>", via="oidc", groups=<groups
            claim>)`` (roles are added by the caller's policy).

        Raises:
            Unauthenticated: ``unauthenticated`` for a malformed, expired, not yet valid,
                wrong-issuer, wrong-audience or badly signed token, a key the issuer
                does not publish, a principal claim naming a reserved principal
                (:data:`~detente.security.identity.RESERVED_NAMES`), an ``email``
                principal without ``email_verified: true``, or a lifetime (``exp`` -
                ``iat``) beyond ``max_lifetime_seconds``.
            IssuerUnavailable: ``issuer_unavailable`` when the issuer's discovery
                document or key set cannot be fetched or is not what the standard says
                (the token was not judged; HTTP 503 with ``Retry-After``).
        """
        s = self.settings
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _refused("the bearer token is not a JWT") from None
        if header.get("alg") not in ALGORITHMS:
            raise _refused(
                f"token algorithm {header.get('alg')!r} is not accepted "
                f"(accepted: {', '.join(ALGORITHMS)})"
            )
        keys = self._discover()
        try:
            key = keys.get_signing_key_from_jwt(token)
        except jwt.PyJWKClientError as exc:
            detail = f"the token's signing key is not published by the issuer: {exc}"
            raise _refused(detail) from None
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=list(ALGORITHMS),
                audience=s.audience,
                issuer=s.issuer,
                leeway=s.leeway_seconds,
                options={"require": ["exp", "iss", "aud", s.principal_claim]},
            )
        except jwt.ExpiredSignatureError:
            raise _refused("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise _refused("the token is not valid yet (nbf/iat in the future)") from None
        except jwt.InvalidAudienceError:
            raise _refused(f"the token is not for audience {s.audience!r}") from None
        except jwt.InvalidIssuerError:
            raise _refused(f"the token was not issued by {s.issuer}") from None
        except jwt.InvalidSignatureError:
            raise _refused("the token's signature does not verify") from None
        except jwt.MissingRequiredClaimError as exc:
            raise _refused(f"the token has no {exc.claim!r} claim") from None
        except jwt.PyJWTError as exc:
            raise _refused(f"invalid token: {exc}") from None
        name = claims.get(s.principal_claim)
        if not isinstance(name, str) or not name:
            raise _refused(f"the token's {s.principal_claim!r} claim is not a name")
        if name.lower() in RESERVED_NAMES:
            raise _refused(f"the token names the reserved principal {name!r}")
        if s.principal_claim == "email" and claims.get("email_verified") is not True:
            raise _refused(
                "the token's e-mail address is not verified (email_verified is not true): "
                "an address names a principal only once its issuer verified it"
            )
        if s.max_lifetime_seconds is not None:
            issued = claims.get("iat")
            start = issued if isinstance(issued, int | float) else time.time()
            lifetime = float(claims["exp"]) - float(start)
            if lifetime > s.max_lifetime_seconds:
                raise _refused(
                    f"the token lives {int(lifetime)} s; this server accepts tokens of at "
                    f"most {s.max_lifetime_seconds} s (--oidc-max-token-lifetime)"
                )
        raw_groups = claims.get(s.groups_claim, ())
        groups = (
            frozenset(str(g) for g in raw_groups)
            if isinstance(raw_groups, list)
            else frozenset({raw_groups})
            if isinstance(raw_groups, str)
            else frozenset()
        )
        return Principal(
            namespaced("oidc", name), "oidc", groups=groups, expires_at=float(claims["exp"])
        )
