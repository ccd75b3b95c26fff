"""The anchor key: the Ed25519 key that signs the log's checkpoints, kept out of the store.

A checkpoint (:mod:`detente.service.anchor`) is worth something only if whoever can write
the store cannot also write a valid checkpoint. The key is therefore a file of its own,
never a row of the store: by default ``detente-anchor.key`` in the repository's common
git directory (beside ``.git``'s ``detente/`` directory that holds the SQLite file, not
inside it), or the file ``$DETENTE_ANCHOR_KEY`` names (put it where the store's
writers cannot read: another user's configuration directory, a mounted secret).

The file is a PKCS#8 PEM private key, created on first use with mode ``0600`` (created
exclusively, so two processes starting together keep one key). Signatures are raw
Ed25519 (RFC 8032) over the checkpoint's canonical bytes, base64 in the checkpoint.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from detente.errors import ValidationError

__all__ = ["AnchorKey"]


@dataclass(frozen=True)
class AnchorKey:
    """The anchor's signing key (private, so it can also verify).

    Attributes:
        path: the key's file.
        private: the Ed25519 private key.
    """

    path: Path
    private: ed25519.Ed25519PrivateKey

    @classmethod
    def load(cls, path: Path, *, create: bool) -> AnchorKey | None:
        """The key at ``path``; made (mode ``0600``) when missing and ``create``.

        Returns:
            The key, or None when the file is missing and ``create`` is False.

        Raises:
            ValidationError: ``validation_error`` when the file is not an Ed25519 PEM
                private key, or cannot be read or written.
        """
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            if not create:
                return None
            return cls._create(path)
        except OSError as exc:
            raise ValidationError(f"cannot read the anchor key {path}: {exc.strerror}") from None
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except ValueError:
            key = None
        if not isinstance(key, ed25519.Ed25519PrivateKey):
            raise ValidationError(f"the anchor key {path} is not an Ed25519 PEM private key")
        return cls(path, key)

    @classmethod
    def _create(cls, path: Path) -> AnchorKey:
        key = ed25519.Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first: use that one
            found = cls.load(path, create=False)
            assert found is not None
            return found
        except OSError as exc:
            raise ValidationError(f"cannot create the anchor key {path}: {exc.strerror}") from None
        with os.fdopen(fd, "wb") as out:
            out.write(pem)
        return cls(path, key)

    @property
    def fingerprint(self) -> str:
        """``sha256:<hex>`` of the raw public key (32 bytes): which key signed."""
        raw = self.private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        return "sha256:" + hashlib.sha256(raw).hexdigest()

    def sign(self, message: bytes) -> str:
        """The Ed25519 signature of ``message``, base64 (88 characters)."""
        return base64.b64encode(self.private.sign(message)).decode("ascii")

    def verifies(self, message: bytes, signature: str) -> bool:
        """True when ``signature`` (base64) is this key's signature of ``message``."""
        try:
            raw = base64.b64decode(signature.encode("ascii"), validate=True)
            self.private.public_key().verify(raw, message)
        except (InvalidSignature, ValueError):
            return False
        return True
