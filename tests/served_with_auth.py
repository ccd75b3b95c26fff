"""A repository's own store served by an authenticating server, with one claim of alice's:
the setting of the local-principal tests (the store is then marked as served with auth)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from api.conftest import running
from detente.config import Roles
from detente.runtime import build_service
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.service import Service
from oidc_issuer import running_issuer


@contextlib.contextmanager
def alice_claim_served_with_auth(
    repo: Path, repo_name: str, path: str, *, audience: str
) -> Iterator[tuple[Service, dict[str, Any]]]:
    """Serve ``repo``'s store with OIDC (alice holds ``claim``) and open alice's claim on
    ``path`` over ``/v1``; yield the service and the claim record."""
    service = build_service([repo])
    try:
        with running_issuer("EdDSA") as issuer:
            gate = AuthGate(
                oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=audience)),
                roles=Roles({"claim": ("alice",)}),
            )
            with running(service, auth=gate) as base:
                body = {
                    "repo": repo_name,
                    "objective": f"alice edits {path}",
                    "baseCommit": "HEAD",
                    "paths": [path],
                    "leaseTtlSeconds": 600,
                    "agent": {"id": "alice", "name": "alice"},
                }
                token = issuer.token("alice", aud=audience)
                headers = {"Authorization": f"Bearer {token}"}
                opened = httpx.post(f"{base}/v1/claims", json=body, headers=headers, timeout=15)
                assert opened.status_code == 201, opened.text
                yield service, opened.json()["claim"]
    finally:
        service.store.close()
