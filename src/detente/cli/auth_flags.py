"""``detente serve``'s authentication and exposure flags, and the rule that joins them.

Without ``--auth`` the server is the single-user, loopback-only tool it always was: every
caller is principal ``local`` with every role. Listening on any other interface needs
``--auth`` (``oidc``, ``keys`` or both) *and* transport security: ``--tls-cert`` with
``--tls-key``, or ``--behind-proxy`` when a reverse proxy terminates TLS (then its
``X-Forwarded-*`` headers are trusted).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from detente.errors import ValidationError
from detente.security.hosts import HostPolicy

if TYPE_CHECKING:
    from detente.security.authn import AuthGate, RoleTable, SignatureVerifier
    from detente.security.ratelimit import RateLimiter
    from detente.service import Service

__all__ = [
    "AUTH_MODES",
    "AllowedOriginFlag",
    "AuthFlag",
    "BehindProxyFlag",
    "Exposure",
    "OidcAudienceFlag",
    "OidcGroupsClaimFlag",
    "OidcIssuerFlag",
    "OidcMaxLifetimeFlag",
    "OidcPrincipalClaimFlag",
    "PublicUrlFlag",
    "TlsCertFlag",
    "TlsKeyFlag",
    "build_gate",
    "exposure",
    "is_loopback",
    "key_verifier",
]

#: The values of ``--auth``.
AUTH_MODES = ("oidc", "keys")

AuthFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--auth",
        metavar="MODE",
        help="Require authentication: oidc (bearer tokens) or keys (RFC 9421 signed "
        "requests); repeat for both. Without it: loopback only, every caller is 'local'.",
    ),
]
OidcIssuerFlag = Annotated[
    str | None,
    typer.Option(
        "--oidc-issuer",
        metavar="URL",
        help="OIDC issuer; its keys are found at URL/.well-known/openid-configuration.",
    ),
]
OidcAudienceFlag = Annotated[
    str | None,
    typer.Option("--oidc-audience", metavar="AUD", help="The audience tokens must name."),
]
OidcPrincipalClaimFlag = Annotated[
    str,
    typer.Option("--oidc-principal-claim", help="Token claim naming the principal."),
]
OidcGroupsClaimFlag = Annotated[
    str,
    typer.Option("--oidc-groups-claim", help="Token claim listing the principal's groups."),
]
OidcMaxLifetimeFlag = Annotated[
    int | None,
    typer.Option(
        "--oidc-max-token-lifetime",
        metavar="SECONDS",
        min=1,
        help="Refuse tokens that live longer than this (exp - iat), in seconds.",
    ),
]
TlsCertFlag = Annotated[
    Path | None,
    typer.Option("--tls-cert", metavar="FILE", help="Serve HTTPS with this PEM certificate."),
]
TlsKeyFlag = Annotated[
    Path | None,
    typer.Option("--tls-key", metavar="FILE", help="The PEM private key of --tls-cert."),
]
BehindProxyFlag = Annotated[
    bool,
    typer.Option(
        "--behind-proxy",
        help="A reverse proxy terminates TLS: trust its X-Forwarded-* headers.",
    ),
]
PublicUrlFlag = Annotated[
    str | None,
    typer.Option(
        "--public-url",
        metavar="URL",
        help="The URL clients reach the server at (https://detente.example.com): its host "
        "is answered to besides the loopback names, and signed requests are checked "
        "against its origin. Needed with --behind-proxy.",
    ),
]
AllowedOriginFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--allowed-origin",
        metavar="ORIGIN",
        help="Browser origin (scheme://host[:port]) allowed to make state-changing "
        "requests besides the server's own (repeatable).",
    ),
]


@dataclass(frozen=True)
class Exposure:
    """How a server is exposed: authentication schemes, OIDC settings, transport.

    Attributes:
        modes: enabled ``--auth`` modes (empty: no authentication, loopback only).
        oidc_issuer / oidc_audience / oidc_principal_claim / oidc_groups_claim /
            oidc_max_lifetime: the ``--oidc-*`` flags (issuer and audience set whenever
            ``oidc`` is enabled).
        tls: ``(certificate, key)`` PEM files, or None for plain HTTP.
        behind_proxy: trust ``X-Forwarded-*`` from the proxy in front.
        allowed_origins: extra browser origins allowed to change state.
        hosts: the host names answered to and the public origin (``--public-url``).
    """

    modes: tuple[str, ...] = ()
    oidc_issuer: str | None = None
    oidc_audience: str | None = None
    oidc_principal_claim: str = "sub"
    oidc_groups_claim: str = "groups"
    oidc_max_lifetime: int | None = None
    tls: tuple[Path, Path] | None = None
    behind_proxy: bool = False
    allowed_origins: tuple[str, ...] = field(default=())
    hosts: HostPolicy = field(default_factory=HostPolicy)

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"


def is_loopback(host: str) -> bool:
    """Whether ``host`` names a loopback interface (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure(
    host: str,
    *,
    auth: list[str] | None = None,
    oidc_issuer: str | None = None,
    oidc_audience: str | None = None,
    oidc_principal_claim: str = "sub",
    oidc_groups_claim: str = "groups",
    oidc_max_lifetime: int | None = None,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
    behind_proxy: bool = False,
    allowed_origins: list[str] | None = None,
    public_url: str | None = None,
) -> Exposure:
    """Check the serve flags together and say how the server is exposed.

    Raises:
        ValidationError: ``validation_error`` naming the flag: an unknown ``--auth``
            mode; ``oidc`` without ``--oidc-issuer``/``--oidc-audience`` (or those
            without ``oidc``); ``--tls-cert`` without ``--tls-key`` (or the reverse) or
            an unreadable file; a non-loopback ``--host`` without ``--auth``, or without
            ``--tls-cert/--tls-key`` or ``--behind-proxy``; an origin that is not
            ``scheme://host[:port]``; a ``--public-url`` that is not
            ``http(s)://host[:port]``, or ``--behind-proxy`` without one.
    """
    modes = tuple(dict.fromkeys(m.strip().lower() for m in auth or ()))
    for mode in modes:
        if mode not in AUTH_MODES:
            raise ValidationError(
                f"--auth must be one of {', '.join(AUTH_MODES)}, got {mode!r}", field="auth"
            )
    if "oidc" in modes:
        for flag, value in (("oidc-issuer", oidc_issuer), ("oidc-audience", oidc_audience)):
            if not value:
                raise ValidationError(f"--auth oidc needs --{flag}", field=flag)
    elif oidc_issuer or oidc_audience:
        raise ValidationError("--oidc-issuer/--oidc-audience need --auth oidc", field="auth")
    if (tls_cert is None) != (tls_key is None):
        raise ValidationError("--tls-cert and --tls-key go together", field="tls-cert")
    tls = None
    if tls_cert is not None and tls_key is not None:
        for flag, path in (("tls-cert", tls_cert), ("tls-key", tls_key)):
            if not path.is_file():
                raise ValidationError(f"--{flag} {path}: no such file", field=flag)
        tls = (tls_cert, tls_key)
    if not is_loopback(host):
        if not modes:
            raise ValidationError(
                f"refusing to listen on {host!r} without authentication: add --auth oidc "
                "and/or --auth keys (see 'Running detente for a team' in the README), or "
                "serve a loopback interface (127.0.0.1, ::1, localhost)",
                field="host",
                value=host,
            )
        if tls is None and not behind_proxy:
            raise ValidationError(
                f"refusing to listen on {host!r} over plain HTTP: add --tls-cert and "
                "--tls-key, or --behind-proxy when a reverse proxy terminates TLS",
                field="host",
                value=host,
            )
    hosts = HostPolicy.from_public_url(public_url, bound=None if is_loopback(host) else host)
    if behind_proxy and hosts.public_origin is None:
        raise ValidationError(
            "--behind-proxy needs --public-url (the URL clients reach the proxy at): the "
            "server answers only to its configured host names",
            field="public-url",
        )
    origins = []
    for origin in allowed_origins or ():
        clean = origin.rstrip("/")
        scheme, sep, rest = clean.partition("://")
        if scheme not in ("http", "https") or not sep or not rest or "/" in rest:
            raise ValidationError(
                f"--allowed-origin must be scheme://host[:port], got {origin!r}",
                field="allowed-origin",
            )
        origins.append(clean)
    return Exposure(
        modes=modes,
        oidc_issuer=oidc_issuer,
        oidc_audience=oidc_audience,
        oidc_principal_claim=oidc_principal_claim,
        oidc_groups_claim=oidc_groups_claim,
        oidc_max_lifetime=oidc_max_lifetime,
        tls=tls,
        behind_proxy=behind_proxy,
        allowed_origins=tuple(origins),
        hosts=hosts,
    )


def build_gate(
    exp: Exposure,
    *,
    roles: RoleTable | None = None,
    keys: SignatureVerifier | None = None,
    limiter: RateLimiter | None = None,
) -> AuthGate | None:
    """The server's :class:`~detente.security.authn.AuthGate` for ``exp`` (None without auth).

    Args:
        exp: the checked flags.
        roles: the ``[roles]`` table; None: every principal holds ``claim`` only.
        keys: the registered agent keys' verifier (needed for ``--auth keys``).
        limiter: the ``[limits]`` rate limits, counted per principal and session.

    Raises:
        ValidationError: ``--auth keys`` without a key registry.
    """
    from detente.security.authn import CLAIM_ONLY, AuthGate
    from detente.security.oidc import OidcSettings, OidcVerifier

    if not exp.modes:
        return None
    oidc = None
    if "oidc" in exp.modes:
        assert exp.oidc_issuer is not None and exp.oidc_audience is not None
        oidc = OidcVerifier(
            OidcSettings(
                issuer=exp.oidc_issuer,
                audience=exp.oidc_audience,
                principal_claim=exp.oidc_principal_claim,
                groups_claim=exp.oidc_groups_claim,
                max_lifetime_seconds=exp.oidc_max_lifetime,
            )
        )
    if "keys" in exp.modes and keys is None:
        raise ValidationError("--auth keys needs registered keys", field="auth")
    return AuthGate(
        oidc=oidc,
        keys=keys if "keys" in exp.modes else None,
        roles=roles if roles is not None else CLAIM_ONLY,
        limiter=limiter,
    )


def key_verifier(exp: Exposure, service: Service, repo: Path) -> SignatureVerifier | None:
    """The signed-request verifier of ``--auth keys`` (None otherwise): the keys registered
    for ``repo`` (``detente principal add``), ``created`` checked against the service's
    clock, used nonces remembered in the store (shared by every server on it)."""
    if "keys" not in exp.modes:
        return None
    from detente.cli.principals import registry_for
    from detente.security.signatures import SignedRequestVerifier
    from detente.storage.ledger import ledger_for

    return SignedRequestVerifier(
        registry_for(repo), service.clock.now, ledger=ledger_for(service.store)
    )
