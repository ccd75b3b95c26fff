"""Who is acting: the authenticated principal of a request and the actor every event records.

A :class:`Principal` is what an authenticator (OIDC bearer token, RFC 9421 signed request,
or the loopback default) proves about a caller: a name, how it was proven (``via``), the
groups it belongs to and, for signed requests, the fingerprint of its public key. Its
:class:`Actor` (``{principal, via, keyFingerprint?}``) is stamped on every event the
request's command appends, inside the hash-chained payload.

The principal travels from the edge that authenticated it to the service through a
context variable (:func:`acting_as` / :func:`current_principal`): the HTTP middleware
binds it around a request, the CLI in local mode runs as :data:`LOCAL`. A command
captures it when it starts (:meth:`detente.service.core.ServiceCore.execute`), so the
thread that finally appends never matters.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any, Literal, NamedTuple

#: How a principal was proven: an OIDC token, a signed request, or the loopback default.
Via = Literal["oidc", "key", "local"]

#: Every role of the policy (``[roles]`` in ``detente.toml``).
ROLES = ("claim", "integrate", "deploy", "arbitrate", "admin", "read")

#: Names no credential may take: the loopback user, the server itself, and the names a
#: reader of the log would take for them. A token or key naming one is refused.
RESERVED_NAMES = frozenset({"local", "system", "anonymous"})


def namespaced(via: Via, subject: str) -> str:
    """The principal name of ``subject`` proven by ``via``: ``oidc:alice``,
    ``key:ci-bot``; the loopback user is plain ``local``.

    One namespace per scheme: an OIDC subject ``bot1`` and the registered key ``bot1`` are
    two principals (``oidc:bot1``, ``key:bot1``) that never own each other's records, and
    no credential can be ``local`` or ``system``.
    """
    return subject if via == "local" else f"{via}:{subject}"


class Actor(NamedTuple):
    """The actor an event records.

    Attributes:
        principal: the principal's name (``local`` without authentication; ``system`` for
            what the server does by itself: lease expiry, meeting deadlines).
        via: ``oidc``, ``key`` or ``local``.
        key_fingerprint: SHA-256 (hex) of the raw Ed25519 public key of a signed request.
    """

    principal: str
    via: Via
    key_fingerprint: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """``{principal, via, keyFingerprint?}`` (the key only for signed requests)."""
        out: dict[str, Any] = {"principal": self.principal, "via": self.via}
        if self.key_fingerprint is not None:
            out["keyFingerprint"] = self.key_fingerprint
        return out


class Principal(NamedTuple):
    """An authenticated caller.

    Attributes:
        name: the principal, namespaced by scheme (:func:`namespaced`): ``oidc:<claim>``
            (the OIDC principal claim, ``sub`` by default), ``key:<name>`` (a registered
            key), or ``local``.
        via: how it was authenticated.
        groups: group names it belongs to (an OIDC groups claim; ``@org/team`` for
            CODEOWNERS teams); roles name them as ``group:NAME``.
        key_fingerprint: see :class:`Actor`.
        roles: the roles the server's policy grants it (filled by the authorizer).
        expires_at: when its credentials end (a bearer token's ``exp``, POSIX seconds);
            None for credentials proven per request (a signature) or none at all. An
            event stream opened with them ends then (:mod:`detente.api.sse`).
    """

    name: str
    via: Via
    groups: frozenset[str] = frozenset()
    key_fingerprint: str | None = None
    roles: frozenset[str] = frozenset()
    expires_at: float | None = None

    @property
    def subject(self) -> str:
        """The name without its scheme: the OIDC claim's value, the key's name, ``local``."""
        prefix = f"{self.via}:"
        return self.name.removeprefix(prefix) if self.via != "local" else self.name

    @property
    def actor(self) -> Actor:
        return Actor(self.name, self.via, self.key_fingerprint)

    def has(self, role: str) -> bool:
        """True when the policy grants ``role`` (``admin`` implies every role)."""
        return role in self.roles or "admin" in self.roles


#: The caller of an unauthenticated (loopback-only) server or of the CLI in local mode.
LOCAL = Principal("local", "local", roles=frozenset(ROLES))

#: The actor of what the server decides by itself (lease expiry, meeting deadlines).
SYSTEM = Actor("system", "local")

#: The actor an event written before actors existed replays as.
LEGACY = Actor("local", "local")

_current: contextvars.ContextVar[Principal] = contextvars.ContextVar(
    "detente_principal", default=LOCAL
)


def current_principal() -> Principal:
    """The principal of the running request (:data:`LOCAL` when none was bound)."""
    return _current.get()


@contextlib.contextmanager
def acting_as(principal: Principal) -> Iterator[Principal]:
    """Bind ``principal`` for the duration of the block (and threads copying the context)."""
    token = _current.set(principal)
    try:
        yield principal
    finally:
        _current.reset(token)


def actor_from_wire(data: Any) -> Actor:
    """The actor recorded in an event payload; :data:`LEGACY` when it has none."""
    if not isinstance(data, dict) or not isinstance(data.get("principal"), str):
        return LEGACY
    via = data.get("via")
    fingerprint = data.get("keyFingerprint")
    return Actor(
        data["principal"],
        via if via in ("oidc", "key", "local") else "local",
        fingerprint if isinstance(fingerprint, str) else None,
    )
