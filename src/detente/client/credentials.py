"""The caller's credentials for an authenticating server, read from the environment.

- ``DETENTE_TOKEN``: an OIDC access or ID token, sent as ``Authorization: Bearer``;
- ``DETENTE_KEY`` (path to a PEM Ed25519 private key) with ``DETENTE_KEY_ID`` (the
  name it was registered under with ``detente principal add``): every request is signed
  per RFC 9421 (:mod:`detente.client.signing`).

The CLI, the git hooks and ``detente mcp --server URL`` all build their HTTP client
through :func:`credentials`, so one environment serves them all.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Mapping
from typing import TYPE_CHECKING

from detente.errors import ValidationError

if TYPE_CHECKING:
    import httpx

__all__ = ["KEY_ENV", "KEY_ID_ENV", "TOKEN_ENV", "credentials"]

TOKEN_ENV = "DETENTE_TOKEN"
KEY_ENV = "DETENTE_KEY"
KEY_ID_ENV = "DETENTE_KEY_ID"


def _bearer(token: str) -> httpx.Auth:
    import httpx

    class BearerAuth(httpx.Auth):
        def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
            request.headers["Authorization"] = f"Bearer {token}"
            yield request

    return BearerAuth()


def credentials(environ: Mapping[str, str] | None = None) -> httpx.Auth | None:
    """The ``httpx`` auth of the environment's credentials, or None when it has none.

    Raises:
        ValidationError: ``validation_error`` for ``DETENTE_KEY`` without
            ``DETENTE_KEY_ID`` (or the reverse) or a key file that is not an Ed25519
            private key.
    """
    env = os.environ if environ is None else environ
    key, key_id = env.get(KEY_ENV), env.get(KEY_ID_ENV)
    if key or key_id:
        if not (key and key_id):
            raise ValidationError(
                f"${KEY_ENV} and ${KEY_ID_ENV} go together (the key file and its registered name)",
                field=KEY_ENV if not key else KEY_ID_ENV,
            )
        from detente.client.signing import SignatureAuth

        return SignatureAuth.from_file(key, key_id)
    token = env.get(TOKEN_ENV, "").strip()
    return _bearer(token) if token else None
