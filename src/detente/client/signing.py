"""Signing every request with the agent's Ed25519 key (RFC 9421), as ``httpx`` auth.

The signature covers ``@method``, ``@target-uri`` and ``content-digest`` (RFC 9530
SHA-256 of the body, added to the request) with the parameters ``created``, ``nonce``
(128 random bits) and ``keyid``, which is what ``detente serve --auth keys`` requires
(:mod:`detente.security.signatures`). The signature base is built by the
``http-message-signatures`` package.
"""

from __future__ import annotations

import secrets
from collections.abc import Generator
from datetime import UTC, datetime
from pathlib import Path

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms

from detente.errors import ValidationError

__all__ = ["COVERED", "SignatureAuth", "load_private_key"]

#: The components every request signature covers.
COVERED = ("@method", "@target-uri", "content-digest")
#: The signature's label in ``Signature-Input`` / ``Signature``.
LABEL = "detente"


def load_private_key(path: str | Path) -> ed25519.Ed25519PrivateKey:
    """The Ed25519 private key in a PEM (PKCS#8) or OpenSSH file.

    Raises:
        ValidationError: ``validation_error`` (field ``DETENTE_KEY``) when the file is
            missing, encrypted or not an Ed25519 private key.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ValidationError(
            f"cannot read the key file {path}: {exc.strerror or exc}", field="DETENTE_KEY"
        ) from None
    key: object = None
    try:
        if data.lstrip().startswith(b"-----BEGIN OPENSSH PRIVATE KEY"):
            key = serialization.load_ssh_private_key(data, password=None)
        else:
            key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise ValidationError(
            f"{path} is not an unencrypted Ed25519 private key (PEM or OpenSSH)",
            field="DETENTE_KEY",
        )
    return key


class SignatureAuth(httpx.Auth):
    """Signs each request (see the module docstring).

    Args:
        key: the agent's private key.
        key_id: the name its public key was registered under (``detente principal add``).
    """

    requires_request_body = True

    def __init__(self, key: ed25519.Ed25519PrivateKey, key_id: str) -> None:
        self.key_id = key_id
        self._signer = HTTPMessageSigner(
            signature_algorithm=algorithms.ED25519,
            key_resolver=MappingKeyResolver(public_keys={}, private_keys={key_id: key}),
        )

    @classmethod
    def from_file(cls, path: str | Path, key_id: str) -> SignatureAuth:
        """Load the key at ``path`` (see :func:`load_private_key`)."""
        return cls(load_private_key(path), key_id)

    def sign(self, request: httpx.Request, *, created: datetime | None = None) -> None:
        """Sign ``request`` in place (``created`` defaults to now)."""
        for name in ("signature", "signature-input", "content-digest"):
            request.headers.pop(name, None)
        self._signer.sign(
            request,
            key_id=self.key_id,
            created=created or datetime.now(UTC),
            nonce=secrets.token_urlsafe(16),
            label=LABEL,
            covered_component_ids=COVERED,
            body=request.content,
        )

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        self.sign(request)
        yield request
