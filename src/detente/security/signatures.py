"""Signed agent requests: RFC 9421 HTTP Message Signatures with Ed25519 keys.

An autonomous agent outside the identity provider signs every request with its Ed25519
key (``detente serve --auth keys``). The signature must cover ``@method``,
``@target-uri`` and ``content-digest`` (RFC 9530, SHA-256 or SHA-512 of the body) and
carry the parameters ``created``, ``nonce`` and ``keyid``; it is accepted when
``created`` lies within :data:`WINDOW_SECONDS` of the server's clock and its nonce has
not been seen from that key within the window (nonces are remembered that long, in the
store's replay ledger (:mod:`detente.storage.ledger`), so a captured request cannot be
replayed: not after a server restart, nor against another server on the same store).
The signature base and digest checks are the ``http-message-signatures`` package's; the
time window and replay policy are ours.

Keys are registered with ``detente principal add`` in a :class:`KeyRegistry` file
(``principals.json`` beside the repository's default database); the server reads it
again whenever it changes, so a new key needs no restart.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from http_message_signatures import (
    HTTPMessageSignaturesException,
    HTTPMessageVerifier,
    HTTPSignatureKeyResolver,
    InvalidSignature,
    algorithms,
)

from detente.errors import Unauthenticated, ValidationError
from detente.security.authn import HttpRequest
from detente.security.identity import RESERVED_NAMES, ROLES, Principal, namespaced
from detente.storage.ledger import MemoryLedger, ReplayLedger

__all__ = [
    "COVERED",
    "WINDOW_SECONDS",
    "KeyRegistry",
    "RegisteredKey",
    "SignedRequestVerifier",
    "fingerprint",
    "load_public_key",
]

#: Seconds a signature's ``created`` may differ from the server's time; nonces are
#: remembered that long.
WINDOW_SECONDS = 300
#: The components every signature must cover.
COVERED = ("@method", "@target-uri", "content-digest")
_CHALLENGE = 'Signature realm="detente"'


def fingerprint(key: ed25519.Ed25519PublicKey) -> str:
    """SHA-256 (hex) of the raw 32-byte public key."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def load_public_key(data: bytes, *, source: str = "key") -> ed25519.Ed25519PublicKey:
    """An Ed25519 public key from PEM, OpenSSH (``ssh-ed25519 ...``) or 32 raw bytes.

    Raises:
        ValidationError: ``validation_error`` (field ``ed25519-public-key``) for anything
            else (another key type, a private key, garbage).
    """
    text = data.strip()
    key: Any = None
    try:
        if text.startswith(b"-----BEGIN"):
            key = serialization.load_pem_public_key(text)
        elif text.startswith(b"ssh-ed25519"):
            key = serialization.load_ssh_public_key(text)
        elif len(data) == 32:
            key = ed25519.Ed25519PublicKey.from_public_bytes(data)
    except ValueError:
        key = None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise ValidationError(
            f"{source} is not an Ed25519 public key (PEM, OpenSSH or 32 raw bytes)",
            field="ed25519-public-key",
        )
    return key


@dataclass(frozen=True)
class RegisteredKey:
    """A registered agent key.

    Attributes:
        name: the principal (also the ``keyid`` its requests carry).
        public_key: base64 of the raw 32-byte Ed25519 public key.
        fingerprint: SHA-256 (hex) of the raw key.
        roles: roles granted with ``--role`` (in addition to ``[roles]``).
    """

    name: str
    public_key: str
    fingerprint: str
    roles: tuple[str, ...] = ()

    def key(self) -> ed25519.Ed25519PublicKey:
        return ed25519.Ed25519PublicKey.from_public_bytes(base64.b64decode(self.public_key))

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "publicKey": self.public_key,
            "fingerprint": self.fingerprint,
            "roles": list(self.roles),
        }


class KeyRegistry:
    """The registered keys, in a JSON file (``{"principals": [...]}``).

    Args:
        path: the file (created by the first :meth:`add`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._keys: dict[str, RegisteredKey] = {}

    def _read(self) -> dict[str, RegisteredKey]:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return {}
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if stamp != self._stamp:
                try:
                    entries = json.loads(self.path.read_text("utf-8"))["principals"]
                    self._keys = {
                        str(e["name"]): RegisteredKey(
                            str(e["name"]),
                            str(e["publicKey"]),
                            str(e["fingerprint"]),
                            tuple(str(r) for r in e.get("roles", ())),
                        )
                        for e in entries
                    }
                except (OSError, ValueError, KeyError, TypeError) as exc:
                    raise ValidationError(
                        f"cannot read the key registry {self.path}: {exc}", field="principals"
                    ) from None
                self._stamp = stamp
            return dict(self._keys)

    def get(self, name: str) -> RegisteredKey | None:
        """The key registered as ``name``, if any."""
        return self._read().get(name)

    def list(self) -> list[RegisteredKey]:
        """Every registered key, by name."""
        return [k for _, k in sorted(self._read().items())]

    def add(self, name: str, public_key: bytes, roles: Iterable[str] = ()) -> RegisteredKey:
        """Register (or replace) the key of principal ``name``: :meth:`entry` then
        :meth:`put`.

        Raises:
            ValidationError: see :meth:`entry`.
        """
        entry = self.entry(name, public_key, roles)
        self.put(entry)
        return entry

    def entry(self, name: str, public_key: bytes, roles: Iterable[str] = ()) -> RegisteredKey:
        """The registration of ``name``'s key, checked but not written.

        Args:
            name: the principal; 1-200 characters, no white space or control characters,
                not a reserved name.
            public_key: the Ed25519 public key (see :func:`load_public_key`).
            roles: roles of :data:`~detente.security.identity.ROLES`.

        Returns:
            The entry with its fingerprint.

        Raises:
            ValidationError: ``validation_error`` naming ``name``, ``role`` or
                ``ed25519-public-key``.
        """
        if not name or len(name) > 200 or any(c.isspace() or not c.isprintable() for c in name):
            raise ValidationError(
                f"a principal name is 1-200 printable characters without spaces, got {name!r}",
                field="name",
            )
        if name.lower() in RESERVED_NAMES:
            raise ValidationError(
                f"{name!r} is a reserved principal name ({', '.join(sorted(RESERVED_NAMES))})",
                field="name",
            )
        wanted = tuple(dict.fromkeys(roles))
        for role in wanted:
            if role not in ROLES:
                raise ValidationError(
                    f"unknown role {role!r} (roles: {', '.join(ROLES)})", field="role"
                )
        key = load_public_key(public_key)
        raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return RegisteredKey(name, base64.b64encode(raw).decode(), fingerprint(key), wanted)

    def put(self, entry: RegisteredKey) -> None:
        """Write ``entry`` (replacing a key of the same name); the file is replaced
        atomically."""
        keys = self._read()
        keys[entry.name] = entry
        self._write(keys)

    def remove(self, name: str) -> RegisteredKey | None:
        """Remove ``name``'s key; the removed entry, or None when there was none."""
        keys = self._read()
        removed = keys.pop(name, None)
        if removed is not None:
            self._write(keys)
        return removed

    def _write(self, keys: dict[str, RegisteredKey]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        document = {"principals": [keys[n].to_wire() for n in sorted(keys)]}
        fd, tmp = tempfile.mkstemp(prefix=".principals-", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(document, out, indent=2)
            out.write("\n")
        os.replace(tmp, self.path)


class _Resolver(HTTPSignatureKeyResolver):
    def __init__(self, registry: KeyRegistry) -> None:
        self.registry = registry

    def resolve_public_key(self, key_id: str) -> ed25519.Ed25519PublicKey | None:
        entry = self.registry.get(key_id)
        return entry.key() if entry is not None else None

    def resolve_private_key(self, key_id: str) -> Any:
        raise NotImplementedError("the server never signs")


@dataclass
class _Message:
    """What the library reads of a request."""

    method: str
    url: str
    headers: Mapping[str, str]


class _WindowedVerifier(HTTPMessageVerifier):
    """The library's verifier without its own time checks: it compares ``created`` with
    the wall clock allowing 5 s of skew, so a signature 10 s ahead was refused although
    the window is :data:`WINDOW_SECONDS` on either side. :meth:`SignedRequestVerifier.verify`
    checks ``created`` (and ``expires``) against the server's clock instead."""

    def validate_created_and_expires(self, sig_input: Any, max_age: Any = None) -> None:
        return None


def _refused(detail: str) -> Unauthenticated:
    return Unauthenticated(detail, challenge=_CHALLENGE)


class SignedRequestVerifier:
    """Verifies RFC 9421 Ed25519 signed requests against a :class:`KeyRegistry`.

    Args:
        registry: the registered keys.
        now: the server's clock (``() -> aware datetime``).
        window_seconds: see :data:`WINDOW_SECONDS`.
        ledger: where used nonces are remembered (the store's
            :func:`~detente.storage.ledger.ledger_for`); default: this process's memory.
    """

    def __init__(
        self,
        registry: KeyRegistry,
        now: Callable[[], datetime],
        *,
        window_seconds: int = WINDOW_SECONDS,
        ledger: ReplayLedger | None = None,
    ) -> None:
        self.registry = registry
        self.ledger: ReplayLedger = ledger if ledger is not None else MemoryLedger()
        self.now = now
        self.window = window_seconds
        self._verifier = _WindowedVerifier(
            signature_algorithm=algorithms.ED25519, key_resolver=_Resolver(registry)
        )

    def verify(self, request: HttpRequest) -> Principal:
        """The registered principal that signed ``request``.

        Raises:
            Unauthenticated: ``unauthenticated`` for a missing or malformed signature,
                an unknown key, a bad signature, missing coverage (``@method``,
                ``@target-uri``, ``content-digest``), a body that does not match its
                digest, no ``created``/``nonce``/``keyid``, ``created`` outside the
                window (:data:`WINDOW_SECONDS` before or after the server's clock), an
                ``expires`` already past, or a nonce already used by that key within the
                window. The target URI is the one the server's configuration gives
                (:func:`detente.api.auth.target_uri`), not the client's ``Host``.
        """
        message = _Message(request.method, request.target_uri, request.headers)
        try:
            results = self._verifier.verify(
                message, max_age=None, require_components=COVERED, body=request.body
            )
        except (InvalidSignature, HTTPMessageSignaturesException) as exc:
            raise _refused(f"the request signature does not verify: {exc}") from None
        except ValidationError as exc:  # the registry file is unreadable
            raise _refused(exc.detail) from None
        if len(results) != 1:
            raise _refused("exactly one request signature is expected")
        params = results[0].parameters
        key_id, created, nonce = params.get("keyid"), params.get("created"), params.get("nonce")
        if not isinstance(key_id, str) or not isinstance(created, int) or not nonce:
            raise _refused("the signature must carry created, nonce and keyid parameters")
        expires = params.get("expires")
        if expires is not None and (
            not isinstance(expires, int) or expires < self.now().timestamp()
        ):
            raise _refused("the signature has expired (its expires parameter is past)")
        entry = self.registry.get(key_id)
        if entry is None:  # removed between verification and now
            raise _refused(f"unknown key {key_id!r}")
        now = self.now().timestamp()
        if abs(now - created) > self.window:
            raise _refused(
                f"the signature was created {int(now - created)} s from the server's time; "
                f"at most {self.window} s are accepted"
            )
        self._remember(key_id, str(nonce), now)
        return Principal(namespaced("key", entry.name), "key", key_fingerprint=entry.fingerprint)

    def extra_roles(self, principal: Principal) -> frozenset[str]:
        """The roles registered with the principal's key (``--role``)."""
        entry = self.registry.get(principal.subject) if principal.via == "key" else None
        return frozenset(entry.roles) if entry is not None else frozenset()

    def _remember(self, key_id: str, nonce: str, now: float) -> None:
        # Remembered for twice the window: a signature is accepted while its ``created``
        # lies within the window on either side of the server's time.
        key = "nonce:" + hashlib.sha256(f"{key_id}\0{nonce}".encode()).hexdigest()
        if not self.ledger.first_use(key, now=now, expires_at=now + 2 * self.window):
            raise _refused("the signature's nonce was already used (a replayed request)")
