"""The caller's credentials for an authenticating server, read from the environment.

- ``DETENTE_TOKEN``: an OIDC access or ID token, sent as ``Authorization: Bearer``;
- ``DETENTE_TOKEN_FILE``: a file holding such a token, read again for every request, so
  whatever refreshes the file (a token helper, a CI step) refreshes a long-running
  client too: an event stream that ends with its token reconnects with the new one;
- ``DETENTE_KEY`` (path to a PEM Ed25519 private key) with ``DETENTE_KEY_ID`` (the
  name it was registered under with ``detente principal add``): every request is signed
  per RFC 9421 (:mod:`detente.client.signing`).

The CLI, the git hooks and ``detente mcp --server URL`` all build their HTTP client
through :func:`credentials`, so one environment serves them all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from detente.errors import ValidationError

if TYPE_CHECKING:
    import httpx

__all__ = ["KEY_ENV", "KEY_ID_ENV", "TOKEN_ENV", "TOKEN_FILE_ENV", "credentials"]

TOKEN_ENV = "DETENTE_TOKEN"
TOKEN_FILE_ENV = "DETENTE_TOKEN_FILE"
KEY_ENV = "DETENTE_KEY"
KEY_ID_ENV = "DETENTE_KEY_ID"


def _bearer(token: str | Callable[[], str]) -> httpx.Auth:
    """Bearer auth with ``token``, or with what ``token()`` answers at each request."""
    import httpx

    class BearerAuth(httpx.Auth):
        def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
            value = token() if callable(token) else token
            request.headers["Authorization"] = f"Bearer {value}"
            yield request

    return BearerAuth()


def _token_file(path: str) -> Callable[[], str]:
    def read() -> str:
        try:
            return Path(path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ValidationError(
                f"cannot read ${TOKEN_FILE_ENV} {path}: {exc.strerror or exc}",
                field=TOKEN_FILE_ENV,
            ) from None

    read()  # an unreadable file is an error now, not at the first request
    return read


def credentials(environ: Mapping[str, str] | None = None) -> httpx.Auth | None:
    """The ``httpx`` auth of the environment's credentials, or None when it has none.

    Raises:
        ValidationError: ``validation_error`` for ``DETENTE_KEY`` without
            ``DETENTE_KEY_ID`` (or the reverse), a key file that is not an Ed25519
            private key, or an unreadable ``DETENTE_TOKEN_FILE``.
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
    token_file = env.get(TOKEN_FILE_ENV, "").strip()
    if token_file:
        return _bearer(_token_file(token_file))
    token = env.get(TOKEN_ENV, "").strip()
    return _bearer(token) if token else None
