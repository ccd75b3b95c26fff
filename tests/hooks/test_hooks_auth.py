"""The git hooks against an authenticating server: ``DETENTE_TOKEN`` in git's environment.

A real bare repository with the hooks installed, real ``git push``es (the hooks are
processes git starts, inheriting its environment), a real OIDC issuer and a real server
that refuses requests without a valid token. A hook that cannot authenticate refuses
the update (fail closed) and says which variable to set. Who may land which claim (the
pusher bound to the claim a commit names) is ``tests/security/test_push_authority.py``,
against a real ``detente serve``.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from hooks_harness import Server, Shared, commit, detente, git, run_git

from detente.clock import SystemClock
from detente.domain.claims.model import ClaimStatus
from detente.domain.gates.evidence import BaseRef, Evidence
from detente.domain.gates.integration import CompleteClaim
from detente.security.authn import AuthGate
from detente.security.identity import LOCAL, acting_as
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.server import make_server
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from oidc_issuer import Issuer, running_issuer

from support import seed

AUD = "detente-hooks"


class Roles:
    """``[roles]``: the CI principal may claim and integrate, anyone else only claim."""

    def allows(self, role: str, principal: str, groups: Iterable[str] = ()) -> bool:
        return role == "claim" or (principal == "ci" and role == "integrate")


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer("RS256") as it:
        yield it


@pytest.fixture
def guarded(
    shared: Shared, tmp_path: Path, issuer: Issuer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Server]:
    """An authenticating server for the shared repository, its hooks installed."""
    service = Service(
        SqliteStore(tmp_path / "detente.db"), SystemClock(), [RepoConfig("shared", shared.bare)]
    )
    gate = AuthGate(oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)), roles=Roles())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    uv = make_server(service, sweep_interval=3600, auth=gate)
    thread = threading.Thread(target=lambda: uv.run(sockets=[sock]), daemon=True)
    thread.start()
    try:
        assert httpx.get(f"{url}/healthz", timeout=20).json()["ok"] is True
        monkeypatch.setenv("DETENTE_TOKEN", issuer.token("ci", aud=AUD))
        detente("--server", url, "hooks", "install", "--bare", str(shared.bare), "--name", "shared")
        monkeypatch.delenv("DETENTE_TOKEN")
        yield Server(url, service)
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()
        service.store.close()


def _ready_topic(server: Server, shared: Shared, token: dict[str, str]) -> str:
    """A claim's commit on a.py, pushed to its branch and ready for review: its head."""
    with acting_as(LOCAL):
        claim = server.service.claims.open_claim(
            replace(seed("a.py", repo="shared", agent="alice"), base_commit=shared.m0)
        ).claim
    git(shared.work, "checkout", "-q", "-B", "claim/alice", shared.m0)
    head = commit(shared.work, "a.py", "a = 2\n", f"Detente-Claim: {claim.id}")
    pushed = run_git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/claim/alice", env=token)
    assert pushed.returncode == 0, pushed.stderr
    with acting_as(LOCAL):
        done = server.service.gates.complete(
            claim.id,
            CompleteClaim(
                claim.id,
                claim.revision,
                claim.fencing_token,
                BaseRef("refs/heads/main", shared.m0),
                Evidence(head_commit=head, changed_files=("a.py",)),
                integrate=False,
            ),
        ).claim
    assert done.status is ClaimStatus.READY_FOR_REVIEW
    return head


def test_a_push_with_a_token_is_checked_by_the_server_and_lands_when_the_claim_is_ready(
    shared: Shared, guarded: Server, issuer: Issuer
) -> None:
    token = {"DETENTE_TOKEN": issuer.token("ci", aud=AUD)}
    unclaimed = commit(shared.work, "b.py", "b = 2\n")
    refused = run_git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/main", env=token)
    assert refused.returncode != 0
    assert f"commit {unclaimed[:12]} has no 'Detente-Claim: <id>' trailer" in refused.stderr
    git(shared.work, "reset", "-q", "--hard", shared.m0)

    head = _ready_topic(guarded, shared, token)
    pushed = run_git(shared.work, "push", "-q", "origin", f"{head}:refs/heads/main", env=token)
    assert pushed.returncode == 0, pushed.stderr
    assert git(shared.bare, "rev-parse", "main") == head


def test_a_push_without_a_valid_token_is_refused_naming_the_variable(
    shared: Shared, guarded: Server, issuer: Issuer
) -> None:
    head = _ready_topic(guarded, shared, {"DETENTE_TOKEN": issuer.token("ci", aud=AUD)})
    for env in ({}, {"DETENTE_TOKEN": issuer.token("ci", aud="another-service")}):
        done = run_git(shared.work, "push", "-q", "origin", f"{head}:refs/heads/main", env=env)
        assert done.returncode != 0
        assert "unauthenticated" in done.stderr or "401" in done.stderr, done.stderr
        assert git(shared.bare, "rev-parse", "main") == shared.m0
    bare = run_git(shared.work, "push", "-q", "origin", f"{head}:refs/heads/main", env={})
    assert "DETENTE_TOKEN" in bare.stderr
