"""A real OIDC issuer for tests: discovery document and JWKS over HTTP on 127.0.0.1.

Keys are generated per run with ``cryptography`` (RSA 2048 for RS256, P-256 for ES256,
Ed25519 for EdDSA); tokens are minted with PyJWT. :meth:`Issuer.rotate` publishes a new
key, as a provider rotating its keys does. ``fetches`` counts JWKS downloads, so a test
can tell a cached key from a refreshed one. ``broken`` makes a document fail as an
outage or a misconfigured provider would: ``{"/jwks": "500"}`` answers 500,
``"not-json"`` a body that is not JSON, ``"no-keys"`` an empty key set.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey


def new_key(alg: str) -> PrivateKey:
    if alg == "RS256":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    if alg == "ES256":
        return ec.generate_private_key(ec.SECP256R1())
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    raise ValueError(alg)


def public_jwk(key: PrivateKey, kid: str, alg: str) -> dict[str, Any]:
    public = key.public_key()
    if isinstance(public, rsa.RSAPublicKey):
        jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
    elif isinstance(public, ec.EllipticCurvePublicKey):
        jwk = ECAlgorithm.to_jwk(public, as_dict=True)
    else:
        jwk = OKPAlgorithm.to_jwk(public, as_dict=True)
    return {**jwk, "kid": kid, "alg": alg, "use": "sig"}


@dataclass
class Issuer:
    """The running issuer. ``url`` is its issuer identifier (``iss``)."""

    url: str = ""
    keys: dict[str, tuple[str, PrivateKey]] = field(default_factory=dict)
    published: set[str] = field(default_factory=set)
    fetches: int = 0
    discoveries: int = 0
    #: path -> "500" | "not-json" | "no-keys": how that document is broken.
    broken: dict[str, str] = field(default_factory=dict)

    def rotate(self, alg: str = "RS256", *, publish: bool = True) -> str:
        """Make a new signing key (published in the JWKS unless ``publish`` is False)."""
        kid = f"{alg.lower()}-{uuid.uuid4().hex[:8]}"
        self.keys[kid] = (alg, new_key(alg))
        if publish:
            self.published.add(kid)
        return kid

    def jwks(self) -> dict[str, Any]:
        return {
            "keys": [
                public_jwk(self.keys[k][1], k, self.keys[k][0]) for k in sorted(self.published)
            ]
        }

    def token(
        self,
        sub: str = "alice",
        *,
        aud: str = "detente-test",
        kid: str | None = None,
        iss: str | None = None,
        expires_in: int = 300,
        not_before: int | None = None,
        **claims: Any,
    ) -> str:
        """A signed token for ``sub`` (by the first key of the issuer unless ``kid``)."""
        kid = kid or next(iter(self.keys))
        alg, key = self.keys[kid]
        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": iss or self.url,
            "sub": sub,
            "aud": aud,
            "iat": now,
            "exp": now + expires_in,
            **claims,
        }
        if not_before is not None:
            payload["nbf"] = now + not_before
        return jwt.encode(payload, key, algorithm=alg, headers={"kid": kid})


@contextmanager
def running_issuer(*algs: str) -> Iterator[Issuer]:
    """Serve an issuer with one key per algorithm in ``algs`` (default RS256)."""
    issuer = Issuer()
    for alg in algs or ("RS256",):
        issuer.rotate(alg)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/jwks":
                issuer.fetches += 1
            elif self.path == "/.well-known/openid-configuration":
                issuer.discoveries += 1
            fault = issuer.broken.get(self.path)
            if fault == "500":
                self.send_error(500)
                return
            if fault == "not-json":
                self._answer(b"<html>maintenance</html>")
                return
            if self.path == "/.well-known/openid-configuration":
                body: dict[str, Any] = {
                    "issuer": issuer.url,
                    "jwks_uri": f"{issuer.url}/jwks",
                    "id_token_signing_alg_values_supported": ["RS256", "ES256", "EdDSA"],
                }
            elif self.path == "/jwks":
                body = {"keys": []} if fault == "no-keys" else issuer.jwks()
            else:
                self.send_error(404)
                return
            self._answer(json.dumps(body).encode())

        def _answer(self, data: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    issuer.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
