"""Host names and origin from configuration: DNS rebinding against a real ``detente serve``,
``--public-url``, and signed requests checked against the configured origin."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from api.conftest import running
from detente.client.signing import SignatureAuth
from detente.errors import ValidationError
from detente.runtime import build_service
from detente.security.authn import AuthGate
from detente.security.hosts import HostPolicy
from detente.security.signatures import KeyRegistry, SignedRequestVerifier
from detente.service import Service
from served_process import first_line

DETENTE = [sys.executable, "-c", "from detente.cli.main import main; main()"]
REBOUND = "attacker.example"


@pytest.fixture
def served(repo: Path) -> Iterator[str]:
    """A real ``detente serve`` without authentication on a free loopback port."""
    proc = subprocess.Popen(
        [*DETENTE, "--repo", str(repo), "serve", "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = first_line(proc, timeout=30)
        assert line, proc.stderr.read() if proc.stderr else "no output"
        url = str(json.loads(line)["listening"])
        assert httpx.get(f"{url}/healthz", timeout=20).json()["ok"] is True
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _claim(repo: Path) -> dict[str, object]:
    return {
        "repo": repo.name,
        "objective": "rewrite AGENTS.md",
        "baseCommit": "HEAD",
        "paths": ["AGENTS.md"],
        "leaseTtlSeconds": 300,
        "agent": {"id": "page", "name": "page"},
    }


def test_a_rebound_host_is_refused_on_every_path_of_a_server_without_auth(
    served: str, repo: Path
) -> None:
    port = served.rsplit(":", 1)[1]
    rebound = {"Host": f"{REBOUND}:{port}"}
    mcp_hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with httpx.Client(timeout=20) as http:
        before = http.get(f"{served}/v1/events", params={"since": 0}).json()["events"]
        answers = {
            "GET /healthz": http.get(f"{served}/healthz", headers=rebound),
            "GET /v1/events": http.get(f"{served}/v1/events", headers=rebound),
            "GET /v1/claims": http.get(f"{served}/v1/claims", headers=rebound),
            "POST /v1/claims": http.post(f"{served}/v1/claims", json=_claim(repo), headers=rebound),
            "POST /mcp": http.post(f"{served}/mcp", json=mcp_hello, headers=rebound),
            "GET /": http.get(f"{served}/", headers=rebound),
            "GET /docs": http.get(f"{served}/docs", headers=rebound),
            "GET /openapi.json": http.get(f"{served}/openapi.json", headers=rebound),
            "GET /dashboard/static/dashboard.js": http.get(
                f"{served}/dashboard/static/dashboard.js", headers=rebound
            ),
        }
        after = http.get(f"{served}/v1/events", params={"since": 0}).json()["events"]
        own = http.get(f"{served}/v1/claims", headers={"Host": f"localhost:{port}"})
    for what, answer in answers.items():
        assert answer.status_code == 403, f"{what}: {answer.status_code} {answer.text[:200]}"
        assert answer.json()["code"] == "forbidden" and answer.json()["field"] == "host"
    assert after == before  # nothing was opened
    assert own.status_code == 200  # the loopback names are answered to


def test_a_public_url_adds_its_host_and_nothing_else(repo: Path) -> None:
    service = build_service([repo])
    hosts = HostPolicy.from_public_url("https://detente.example.com")
    try:
        with running(service, hosts=hosts) as base, httpx.Client(timeout=20) as http:
            public = http.get(f"{base}/healthz", headers={"Host": "detente.example.com"})
            other = http.get(f"{base}/healthz", headers={"Host": "other.example.com"})
    finally:
        service.store.close()
    assert public.status_code == 200
    assert other.status_code == 403


def test_a_public_url_is_an_http_origin_without_a_path() -> None:
    for bad in ("ftp://x.example", "https://x.example/app", "x.example", "https://u@x.example"):
        with pytest.raises(ValidationError) as caught:
            HostPolicy.from_public_url(bad)
        assert caught.value.field == "public-url"


@pytest.fixture
def signed_service(repo: Path, tmp_path: Path) -> Iterator[tuple[Service, AuthGate, SignatureAuth]]:
    key = ed25519.Ed25519PrivateKey.generate()
    registry = KeyRegistry(tmp_path / "principals.json")
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    registry.add("ci-bot", pem)
    service = build_service([repo])
    gate = AuthGate(keys=SignedRequestVerifier(registry, service.clock.now))
    try:
        yield service, gate, SignatureAuth(key, "ci-bot")
    finally:
        service.store.close()


def test_a_request_signed_for_another_server_does_not_verify_here(
    signed_service: tuple[Service, AuthGate, SignatureAuth], repo: Path
) -> None:
    service, gate, signer = signed_service
    hosts = HostPolicy.from_public_url("https://detente.example.com")
    with running(service, auth=gate, hosts=hosts) as base, httpx.Client(timeout=20) as http:
        port = int(base.rsplit(":", 1)[1])
        answers = {}
        for signed_for, host in (
            ("http://other-server.example:7421", "other-server.example:7421"),
            (f"http://127.0.0.1:{port + 1}", f"127.0.0.1:{port + 1}"),
            ("http://detente.example.com", "detente.example.com"),  # the scheme is https
            ("https://detente.example.com", "detente.example.com"),
            (base, f"127.0.0.1:{port}"),
        ):
            request = http.build_request("POST", f"{signed_for}/v1/claims", json=_claim(repo))
            signer.sign(request)
            request.url = httpx.URL(f"{base}/v1/claims")
            request.headers["Host"] = host
            answers[signed_for] = http.send(request).status_code
    assert answers == {
        "http://other-server.example:7421": 403,  # not a name of this server
        f"http://127.0.0.1:{port + 1}": 401,  # a loopback server on another port
        "http://detente.example.com": 401,
        "https://detente.example.com": 201,  # the configured public origin
        base: 201,  # the loopback name at the listening port
    }
