"""``detente mcp --server URL`` against an authenticating server, credentials from the
environment: ``DETENTE_TOKEN`` (bearer) and ``DETENTE_KEY``/``DETENTE_KEY_ID`` (RFC 9421
signed requests). The MCP server is a real subprocess spoken to over stdio by the SDK's
client; the detente server is a real uvicorn with a real OIDC issuer or key registry.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from mcp.client.stdio import get_default_environment
from mcp_harness import call, detente_command, register

from api.conftest import running
from detente.clock import FakeClock
from detente.runtime import build_service
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.security.signatures import KeyRegistry, SignedRequestVerifier
from detente.service import Service
from mcp import Client, StdioServerParameters
from oidc_issuer import running_issuer

pytestmark = pytest.mark.anyio

AUD = "detente-mcp"


@pytest.fixture
def service(repo: Path, tmp_path: Path) -> Iterator[Service]:
    svc = build_service([repo], store_url=f"sqlite:///{tmp_path / 'server.db'}", clock=FakeClock())
    yield svc
    svc.store.close()


def _mcp(base: str, repo: Path, **env: str) -> Client:
    """``detente mcp --server base`` spawned with ``env`` added to a minimal environment."""
    command, *prefix = detente_command()
    full = {**get_default_environment(), **env}
    if os.environ.get("PYTHONPATH"):
        full["PYTHONPATH"] = os.environ["PYTHONPATH"]
    args = [*prefix, "mcp", "--server", base, "--repo", str(repo)]
    return Client(StdioServerParameters(command=command, args=args, env=full))


async def test_mcp_with_a_server_url_sends_the_bearer_token_of_detente_token(
    service: Service, repo: Path
) -> None:
    with running_issuer("ES256") as issuer:
        gate = AuthGate(oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)))
        with running(service, auth=gate) as base:
            async with _mcp(base, repo, DETENTE_TOKEN=issuer.token("alice", aud=AUD)) as client:
                registered = await call(
                    client, "register_agent_work", agent_name="codex", intent="t", session_id="a1"
                )
                claimed = await call(
                    client, "claim_files", session_id="a1", paths=["docs/foo.md"], reason="docs"
                )
    assert registered["status"] == "active"
    claim = service.claims.get_claim(claimed["claimId"]).claim
    assert claim.principal == "oidc:alice"


async def test_mcp_with_a_server_url_signs_every_call_with_detente_key(
    service: Service, repo: Path, tmp_path: Path
) -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    key_file = tmp_path / "agent.pem"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    registry = KeyRegistry(tmp_path / "principals.json")
    registry.add(
        "ci-bot",
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
    )
    # The subprocess signs with the real time: the verifier checks ``created`` against it.
    gate = AuthGate(keys=SignedRequestVerifier(registry, lambda: datetime.now(UTC)))
    with running(service, auth=gate) as base:
        env = {"DETENTE_KEY": str(key_file), "DETENTE_KEY_ID": "ci-bot"}
        async with _mcp(base, repo, **env) as client:
            await register(client, "k1")
            claimed = await call(
                client, "claim_files", session_id="k1", paths=["src/app.py"], reason="fix"
            )
    claim = service.claims.get_claim(claimed["claimId"]).claim
    assert claim.principal == "key:ci-bot"
    events, _ = service.events(limit=100)
    assert {e.data["actor"]["via"] for e in events} == {"key"}


def test_mcp_with_a_server_url_and_no_credentials_exits_naming_the_variables(
    service: Service, repo: Path
) -> None:
    with running_issuer("ES256") as issuer:
        gate = AuthGate(oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)))
        with running(service, auth=gate) as base:
            env = {k: v for k, v in os.environ.items() if not k.startswith("DETENTE_")}
            done = subprocess.run(
                [*detente_command(), "mcp", "--server", base, "--repo", str(repo)],
                input="",
                capture_output=True,
                text=True,
                env=env,
                timeout=60,
            )
    assert done.returncode == 8  # unauthenticated, before any MCP message is read
    assert "unauthenticated" in done.stderr and "DETENTE_TOKEN" in done.stderr
    assert done.stdout == ""  # the protocol channel stays clean
    events, _ = service.events(limit=100)
    assert events == []
