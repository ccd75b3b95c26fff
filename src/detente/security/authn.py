"""Authentication of one request: which scheme applies, who the caller is, which roles.

``detente serve --auth oidc`` accepts ``Authorization: Bearer <jwt>``
(:mod:`detente.security.oidc`); ``--auth keys`` accepts RFC 9421 signed requests
(:mod:`detente.security.signatures`); both may be enabled. A request with neither
credential, or with one whose scheme is not enabled, is refused with
``unauthenticated``. The roles of the proven principal come from the policy's
``[roles]`` table (:class:`RoleTable`, the ``detente.toml`` ``[roles]`` of
:mod:`detente.config`); without one every authenticated principal holds ``claim`` only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from detente.errors import Unauthenticated
from detente.security.identity import ROLES, Principal
from detente.security.oidc import OidcVerifier
from detente.security.ratelimit import RateLimiter

__all__ = ["CLAIM_ONLY", "AuthGate", "HttpRequest", "RoleTable", "SignatureVerifier"]


class RoleTable(Protocol):
    """Who holds which role (``[roles]``: principal names and ``group:NAME`` entries)."""

    def allows(self, role: str, principal: str, groups: Iterable[str] = ()) -> bool: ...


class _ClaimOnly:
    """The table without a policy: every authenticated principal may ``claim``, no more."""

    def allows(self, role: str, principal: str, groups: Iterable[str] = ()) -> bool:
        return role == "claim"


#: Roles without a ``[roles]`` table.
CLAIM_ONLY: RoleTable = _ClaimOnly()


def _lists(table: RoleTable, role: str) -> bool:
    """Whether ``table`` names holders of ``role`` itself (a ``[roles]`` entry)."""
    members = getattr(table, "members", None)
    return bool(members(role)) if callable(members) else False


@dataclass(frozen=True)
class HttpRequest:
    """What authentication reads of a request.

    Attributes:
        method: the HTTP method, upper case.
        target_uri: the full request URI (scheme, authority, path, query) as the client
            addressed it (behind a proxy: from ``X-Forwarded-*`` when trusted).
        headers: header name (lower case) -> value (repeated headers joined by ``, ``).
        body: the request body bytes (empty when the request has none).
    """

    method: str
    target_uri: str
    headers: Mapping[str, str]
    body: bytes = b""


class SignatureVerifier(Protocol):
    """Verifies an RFC 9421 signed request (see :mod:`detente.security.signatures`)."""

    def verify(self, request: HttpRequest) -> Principal: ...

    def extra_roles(self, principal: Principal) -> frozenset[str]: ...


@dataclass
class AuthGate:
    """The server's authentication: enabled schemes and the role table.

    Args:
        oidc: the bearer-token verifier (``--auth oidc``), or None.
        keys: the signed-request verifier (``--auth keys``), or None.
        roles: the ``[roles]`` table; default :data:`CLAIM_ONLY`.
        realm: the ``WWW-Authenticate`` realm.
        limiter: the rate limits of ``[limits]`` (claim opens, agent registrations),
            counted per authenticated principal and per session; None: unlimited.
    """

    oidc: OidcVerifier | None = None
    keys: SignatureVerifier | None = None
    roles: RoleTable = field(default_factory=lambda: CLAIM_ONLY)
    realm: str = "detente"
    limiter: RateLimiter | None = None

    def __post_init__(self) -> None:
        if self.oidc is None and self.keys is None:
            raise ValueError("an AuthGate needs at least one scheme (oidc or keys)")

    @property
    def needs_body(self) -> bool:
        """Whether authentication reads the body (signed requests cover its digest)."""
        return self.keys is not None

    def challenge(self) -> str:
        """The ``WWW-Authenticate`` value of a request without credentials."""
        parts = []
        if self.oidc is not None:
            parts.append(f'Bearer realm="{self.realm}"')
        if self.keys is not None:
            parts.append(f'Signature realm="{self.realm}"')
        return ", ".join(parts)

    def authenticate(self, request: HttpRequest) -> Principal:
        """The principal ``request`` proves, with the roles the policy grants it.

        Raises:
            Unauthenticated: ``unauthenticated`` for no credentials, a scheme that is
                not enabled, or credentials that do not verify (the error's
                ``challenge`` is the ``WWW-Authenticate`` value to answer with).
        """
        authorization = request.headers.get("authorization", "")
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() == "bearer" and credentials.strip():
            if self.oidc is None:
                raise Unauthenticated(
                    "bearer tokens are not accepted here (start the server with --auth oidc)",
                    challenge=self.challenge(),
                )
            principal = self.oidc.verify(credentials.strip())
        elif "signature" in request.headers or "signature-input" in request.headers:
            if self.keys is None:
                raise Unauthenticated(
                    "signed requests are not accepted here (start the server with --auth keys)",
                    challenge=self.challenge(),
                )
            principal = self.keys.verify(request)
        elif authorization:
            raise Unauthenticated(
                f"unsupported Authorization scheme {scheme!r}", challenge=self.challenge()
            )
        else:
            raise Unauthenticated(
                "authentication required: send a bearer token (DETENTE_TOKEN) or sign the "
                "request (DETENTE_KEY, DETENTE_KEY_ID)",
                challenge=self.challenge(),
            )
        return self.with_roles(principal)

    def with_roles(self, principal: Principal) -> Principal:
        """``principal`` with every role the table grants its name or groups (and, for a
        registered key, the roles registered with it).

        ``[roles]`` entries are principal names (``oidc:alice``, ``key:ci-bot``); a bare
        entry (``alice``) names the OIDC principal of that subject, never a key. The
        ``read`` role (claims, events, meetings, agents, memory, patches, deployments) is
        held by whoever holds any role unless ``[roles] read`` lists its holders."""

        def allowed(role: str) -> bool:
            if self.roles.allows(role, principal.name, principal.groups):
                return True
            return principal.via == "oidc" and self.roles.allows(
                role, principal.subject, principal.groups
            )

        granted = frozenset(role for role in ROLES if allowed(role))
        if self.keys is not None and principal.via == "key":
            granted |= self.keys.extra_roles(principal)
        if granted and "read" not in granted and not _lists(self.roles, "read"):
            granted |= {"read"}  # without a [roles] read entry: whoever holds a role reads
        return principal._replace(roles=granted)
