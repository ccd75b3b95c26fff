"""Where ``detente serve`` may listen: loopback without auth; elsewhere auth plus TLS."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_harness import Cli

from detente.cli.auth_flags import exposure, is_loopback
from detente.errors import ValidationError

OIDC = {"oidc_issuer": "https://id.example.com", "oidc_audience": "detente"}


def test_a_proxy_without_the_public_url_clients_use_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        exposure("0.0.0.0", auth=["keys"], behind_proxy=True)
    assert caught.value.field == "public-url"


def test_a_non_loopback_address_to_listen_on_is_a_name_the_server_answers_to() -> None:
    hosts = exposure(
        "10.1.2.3", auth=["keys"], behind_proxy=True, public_url="https://d.example"
    ).hosts
    assert hosts.allows("10.1.2.3:7420") and hosts.allows("d.example")
    assert not hosts.allows("e.example")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.5", "::1", "[::1]", "localhost"])
def test_loopback_hosts_need_no_authentication(host: str) -> None:
    assert is_loopback(host)
    assert exposure(host).modes == ()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com"])
def test_other_hosts_without_auth_are_refused_naming_the_host(host: str) -> None:
    with pytest.raises(ValidationError) as caught:
        exposure(host)
    assert caught.value.field == "host" and "--auth" in caught.value.detail


def test_auth_without_tls_or_a_proxy_is_refused_off_loopback() -> None:
    with pytest.raises(ValidationError) as caught:
        exposure("0.0.0.0", auth=["oidc"], **OIDC)
    assert "--tls-cert" in caught.value.detail and "--behind-proxy" in caught.value.detail


def test_auth_behind_a_proxy_or_with_tls_files_may_listen_anywhere(tmp_path: Path) -> None:
    proxied = exposure(
        "0.0.0.0",
        auth=["oidc", "keys"],
        behind_proxy=True,
        public_url="https://detente.example.com",
        **OIDC,
    )
    assert proxied.modes == ("oidc", "keys") and proxied.scheme == "http"
    assert proxied.hosts.public_origin == "https://detente.example.com"
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("cert")
    key.write_text("key")
    direct = exposure("0.0.0.0", auth=["keys"], tls_cert=cert, tls_key=key)
    assert direct.tls == (cert, key) and direct.scheme == "https"


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        ({"auth": ["kerberos"]}, "auth"),
        ({"auth": ["oidc"]}, "oidc-issuer"),
        ({"auth": ["oidc"], "oidc_issuer": "https://id.example.com"}, "oidc-audience"),
        ({"oidc_issuer": "https://id.example.com", "oidc_audience": "a"}, "auth"),
        ({"tls_cert": Path("c.pem")}, "tls-cert"),
        (
            {"tls_cert": Path("/nonexistent/c.pem"), "tls_key": Path("/nonexistent/k.pem")},
            "tls-cert",
        ),
        ({"allowed_origins": ["evil.example"]}, "allowed-origin"),
        ({"allowed_origins": ["https://a.example/path"]}, "allowed-origin"),
    ],
)
def test_inconsistent_flags_are_refused_naming_the_flag(flags: dict, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        exposure("127.0.0.1", **flags)
    assert caught.value.field == field


@pytest.mark.parametrize("cli", ["inprocess"], indirect=True)  # serve needs no server
def test_serve_refuses_plain_http_off_loopback_even_with_auth(cli: Cli) -> None:
    code, body = cli.json(
        "serve",
        "--host",
        "0.0.0.0",
        "--auth",
        "oidc",
        "--oidc-issuer",
        "https://id.example.com",
        "--oidc-audience",
        "detente",
    )
    assert code == 2
    assert body["field"] == "host" and "--behind-proxy" in body["detail"]
