"""A real ``detente serve --auth ...`` process on a real port: TLS, proxies, exposure rules.

The certificate is self-signed, made per run with ``cryptography``; the OIDC issuer is the
test issuer (``tests/oidc_issuer.py``); agent keys are registered with the real
``detente principal add``.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import NameOID
from e2e_harness import DETENTE, git

from detente.client.signing import SignatureAuth
from oidc_issuer import Issuer, running_issuer
from served_process import first_line

AUD = "detente-e2e"


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for ``localhost`` and ``127.0.0.1`` and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


class Served:
    """A running ``detente serve``: its advertised URL and the port to reach it on."""

    def __init__(self, proc: subprocess.Popen[str], listening: str) -> None:
        self.proc = proc
        self.listening = listening
        self.port = int(listening.rsplit(":", 1)[1])


@pytest.fixture
def serve(repo: Path) -> Iterator[Callable[..., Served]]:
    """Start ``detente serve ARGS --port 0 --json``; every started server is stopped after."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> Served:
        proc = subprocess.Popen(
            [*DETENTE, "--repo", str(repo), "serve", "--port", "0", "--json", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(proc)
        line = first_line(proc, timeout=30)
        assert line, proc.stderr.read() if proc.stderr else "no output"
        return Served(proc, json.loads(line)["listening"])

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer("RS256") as it:
        yield it


def _trusting(cert: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert))


def _claim(repo: Path, *paths: str) -> dict[str, object]:
    return {
        "repo": repo.name,
        "objective": f"edit {', '.join(paths)}",
        "baseCommit": git(repo, "rev-parse", "HEAD"),
        "paths": list(paths),
        "leaseTtlSeconds": 300,
        "agent": {"id": "e2e", "name": "e2e"},
    }


def _agent_key(repo: Path, tmp_path: Path, name: str) -> ed25519.Ed25519PrivateKey:
    """A key registered for ``name`` with the real ``detente principal add``."""
    key = ed25519.Ed25519PrivateKey.generate()
    public = tmp_path / f"{name}.pub"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    added = subprocess.run(
        [
            *DETENTE,
            "--repo",
            str(repo),
            "principal",
            "add",
            name,
            "--ed25519-public-key",
            str(public),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert added.returncode == 0, added.stderr + added.stdout
    return key


def test_oidc_over_tls_accepts_a_bearer_token_and_answers_401_with_a_challenge_without_one(
    serve: Callable[..., Served], repo: Path, issuer: Issuer, tmp_path: Path
) -> None:
    cert, key = self_signed(tmp_path)
    served = serve(
        "--host",
        "0.0.0.0",
        "--auth",
        "oidc",
        "--oidc-issuer",
        issuer.url,
        "--oidc-audience",
        AUD,
        "--tls-cert",
        str(cert),
        "--tls-key",
        str(key),
    )
    assert served.listening.startswith("https://")
    base = f"https://127.0.0.1:{served.port}"
    with httpx.Client(verify=_trusting(cert), timeout=20) as http:
        assert http.get(f"{base}/healthz").json()["ok"] is True
        spoofed = {"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "http"}
        metadata = http.get(f"{base}/.well-known/oauth-protected-resource", headers=spoofed)
        refused = http.post(f"{base}/v1/claims", json=_claim(repo, "src/app/core.py"))
        token = {"Authorization": f"Bearer {issuer.token('alice', aud=AUD)}"}
        opened = http.post(f"{base}/v1/claims", json=_claim(repo, "src/app/core.py"), headers=token)
    assert refused.status_code == 401
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["code"] == "unauthenticated"
    assert refused.headers["www-authenticate"].startswith('Bearer realm="detente"')
    assert opened.status_code == 201, opened.text
    assert opened.json()["claim"]["principal"] == "oidc:alice"
    assert metadata.json()["resource"] == base  # not behind a proxy: forwarded headers ignored
    with pytest.raises(httpx.HTTPError):  # plain HTTP is not served on that port
        httpx.get(f"http://127.0.0.1:{served.port}/healthz", timeout=10).raise_for_status()


def test_keys_over_tls_accept_a_request_signed_by_a_registered_key_and_refuse_others(
    serve: Callable[..., Served], repo: Path, tmp_path: Path
) -> None:
    agent = _agent_key(repo, tmp_path, "ci-bot")
    cert, key = self_signed(tmp_path)
    served = serve(
        "--host", "127.0.0.1", "--auth", "keys", "--tls-cert", str(cert), "--tls-key", str(key)
    )
    base = f"https://127.0.0.1:{served.port}"
    with httpx.Client(verify=_trusting(cert), timeout=20) as http:
        unsigned = http.post(f"{base}/v1/claims", json=_claim(repo, "src/app/api.py"))
        stranger = http.post(
            f"{base}/v1/claims",
            json=_claim(repo, "src/app/api.py"),
            auth=SignatureAuth(ed25519.Ed25519PrivateKey.generate(), "ci-bot"),
        )
        opened = http.post(
            f"{base}/v1/claims",
            json=_claim(repo, "src/app/api.py"),
            auth=SignatureAuth(agent, "ci-bot"),
        )
    assert unsigned.status_code == 401
    assert unsigned.headers["www-authenticate"].startswith("Signature")
    assert stranger.status_code == 401 and stranger.json()["code"] == "unauthenticated"
    assert opened.status_code == 201, opened.text
    assert opened.json()["claim"]["principal"] == "key:ci-bot"


@pytest.mark.parametrize(
    ("flags", "refusal"),
    [
        (["--host", "0.0.0.0"], "--auth"),
        (["--host", "10.1.2.3", "--auth", "keys"], "--behind-proxy"),
        (
            [
                "--host",
                "0.0.0.0",
                "--auth",
                "oidc",
                "--oidc-issuer",
                "https://id.example.com",
                "--oidc-audience",
                AUD,
            ],
            "--tls-cert",
        ),
    ],
)
def test_a_non_loopback_host_without_auth_or_transport_security_is_refused(
    repo: Path, flags: list[str], refusal: str
) -> None:
    text = subprocess.run(
        [*DETENTE, "--repo", str(repo), "serve", "--port", "0", *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )
    as_json = subprocess.run(
        [*DETENTE, "--repo", str(repo), "serve", "--port", "0", "--json", *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert text.returncode == 2, text.stderr
    assert refusal in text.stderr and "Traceback" not in text.stderr
    assert as_json.returncode == 2
    problem = json.loads(as_json.stdout)
    assert problem["code"] == "validation_error" and problem["field"] == "host"


def test_behind_a_proxy_the_forwarded_scheme_host_and_client_are_trusted(
    serve: Callable[..., Served], repo: Path, tmp_path: Path, issuer: Issuer
) -> None:
    agent = _agent_key(repo, tmp_path, "ci-bot")
    served = serve(
        "--host",
        "0.0.0.0",
        "--auth",
        "oidc",
        "--auth",
        "keys",
        "--oidc-issuer",
        issuer.url,
        "--oidc-audience",
        AUD,
        "--behind-proxy",
        "--public-url",
        "https://detente.example.com",
    )
    direct = f"http://127.0.0.1:{served.port}"
    public = "https://detente.example.com"
    forwarded = {
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "detente.example.com",
        "X-Forwarded-For": "203.0.113.9",
    }
    with httpx.Client(timeout=20) as http:
        metadata = http.get(f"{direct}/.well-known/oauth-protected-resource", headers=forwarded)
        # The agent signs the URL it addressed (the proxy's); the server must rebuild it.
        request = http.build_request(
            "POST", f"{public}/v1/claims", json=_claim(repo, "docs/guide.md")
        )
        SignatureAuth(agent, "ci-bot").sign(request)
        request.url = httpx.URL(f"{direct}/v1/claims")
        request.headers.update({**forwarded, "Host": f"127.0.0.1:{served.port}"})
        opened = http.send(request)
        origin = http.post(
            f"{direct}/v1/claims",
            json=_claim(repo, "README.md"),
            headers={
                **forwarded,
                "Origin": public,
                "Authorization": f"Bearer {issuer.token('bob', aud=AUD)}",
            },
        )
    assert metadata.json()["resource"] == public
    assert opened.status_code == 201, opened.text
    assert opened.json()["claim"]["principal"] == "key:ci-bot"
    assert origin.status_code == 201, origin.text  # the proxy's origin is the server's own
    served.proc.terminate()
    _, log = served.proc.communicate(timeout=20)
    assert "203.0.113.9" in log
