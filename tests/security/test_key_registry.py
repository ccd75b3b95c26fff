"""The key registry in the log: ``detente principal add`` and ``remove`` record each
change as an event (with the acting principal) before the registry file changes; a
removed key signs nothing more."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from typer.testing import CliRunner

from detente.cli.main import app
from detente.cli.principals import registry_for
from detente.client.signing import SignatureAuth
from detente.clock import SystemClock
from detente.errors import Unauthenticated
from detente.runtime import build_service
from detente.security.authn import HttpRequest
from detente.security.signatures import SignedRequestVerifier


def _cli(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(app, ["--repo", str(repo), *args, "--json"])
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {}


def _registry_events(repo: Path) -> list[dict[str, Any]]:
    service = build_service([repo])
    try:
        events, _ = service.events(since=0, limit=1000)
    finally:
        service.store.close()
    return [
        {"type": e.type, "subject": e.subject, "data": e.data}
        for e in events
        if e.type.startswith("principal.")
    ]


def _signed_by(key: ed25519.Ed25519PrivateKey) -> HttpRequest:
    request = httpx.Request("GET", "http://127.0.0.1:7420/v1/claims")
    SignatureAuth(key, "ci-bot").sign(request)
    headers = {k.lower(): v for k, v in request.headers.items()}
    return HttpRequest("GET", str(request.url), headers, b"")


def test_adding_and_removing_a_key_are_events_and_a_removed_key_signs_nothing(
    repo: Path, tmp_path: Path
) -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    public = tmp_path / "ci-bot.pub"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
        )
    )
    verifier = SignedRequestVerifier(registry_for(repo), SystemClock().now)

    added, registered = _cli(
        repo,
        "principal",
        "add",
        "ci-bot",
        "--ed25519-public-key",
        str(public),
        "--role",
        "integrate",
    )
    assert added == 0, registered
    assert verifier.verify(_signed_by(key)).name == "key:ci-bot"
    removed, gone = _cli(repo, "principal", "remove", "ci-bot")
    again, missing = _cli(repo, "principal", "remove", "ci-bot")

    assert removed == 0, gone
    fingerprint = registered["principal"]["fingerprint"]
    events = _registry_events(repo)
    assert [(e["type"], e["subject"]) for e in events] == [
        ("principal.key_registered", "principal/ci-bot"),
        ("principal.key_removed", "principal/ci-bot"),
    ]
    assert events[0]["data"]["fingerprint"] == fingerprint
    assert events[0]["data"]["roles"] == ["integrate"]
    assert events[1]["data"]["actor"]["principal"] == "local"
    assert missing["code"] == "not_found" and again != 0
    assert registry_for(repo).list() == []
    try:
        verifier.verify(_signed_by(key))
        raise AssertionError("a removed key still verifies")
    except Unauthenticated as exc:
        assert "unknown key" in exc.detail or "does not verify" in exc.detail


def test_a_refused_key_changes_neither_the_log_nor_the_file(repo: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.pub"
    bad.write_text("not a key")

    code, problem = _cli(repo, "principal", "add", "ci-bot", "--ed25519-public-key", str(bad))

    assert code != 0 and problem["code"] == "validation_error"
    assert _registry_events(repo) == []
    assert not registry_for(repo).path.exists()


def test_the_cli_and_the_service_keep_keys_in_the_one_registry_path(repo: Path) -> None:
    from detente.vcs import principals_path

    key = ed25519.Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    service = build_service([repo])
    try:
        service.principals.register_key("ci-bot", raw, ("claim",))
    finally:
        service.store.close()

    path = principals_path(repo)
    assert registry_for(repo).path == path
    assert [k.name for k in registry_for(repo).list()] == ["ci-bot"]
    assert json.loads(path.read_text())  # the service wrote the file the CLI reads
