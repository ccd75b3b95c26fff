"""A crashed agent (SIGKILL) on a real server process: takeover refused before its TTL,
accepted after it, with the predecessor recorded as previous owner."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support import wait_until

SERVER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import uvicorn
    from detente.api.app import create_app
    from detente.clock import SystemClock
    from detente.domain.policy import Policy
    from detente.service import RepoConfig, Service
    from detente.storage.sqlite import SqliteStore
    from detente.vcs.repo import resolve_commit

    repo, db, port = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    service = Service(SqliteStore(db), SystemClock(), [RepoConfig("demo", path=repo)],
                      policy=Policy(takeover_grace_seconds=0), resolve_commit=resolve_commit)
    uvicorn.run(create_app(service, sweep_interval=0.2), host="127.0.0.1", port=port,
                log_level="warning")
    """
)

AGENT = textwrap.dedent(
    """
    import sys, time
    import httpx
    base, head = sys.argv[1], sys.argv[2]
    with httpx.Client(base_url=base, timeout=5) as http:
        claim = http.post("/v1/claims", json={
            "repo": "demo", "objective": "crashy work", "baseCommit": head,
            "paths": ["src/**"], "leaseTtlSeconds": 2,
            "agent": {"id": "crashy", "name": "crashy"}}).json()["claim"]
        print(claim["id"], flush=True)
        while True:  # heartbeat until killed
            time.sleep(0.3)
            claim = http.post(f"/v1/claims/{claim['id']}/renew", json={
                "expectedLeaseRevision": claim["lease"]["revision"],
                "expectedClaimRevision": claim["revision"], "ttlSeconds": 2}).json()["claim"]
    """
)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, str]]:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "i"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    port = _port()
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(repo), str(tmp_path / "d.db"), str(port)]
    )
    base = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        try:
            return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    try:
        assert wait_until(healthy, timeout=20), "server did not start"
        yield base, head
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_sigkilled_agents_claim_is_taken_over_after_its_ttl_not_before(
    server: tuple[str, str],
) -> None:
    base, head = server
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, base, head], stdout=subprocess.PIPE, text=True
    )
    assert agent.stdout is not None
    claim_id = agent.stdout.readline().strip()
    assert claim_id.startswith("clm_")
    http = httpx.Client(base_url=base, timeout=5)

    def renewed_once() -> bool:
        return int(http.get(f"/v1/claims/{claim_id}").json()["claim"]["lease"]["revision"]) >= 2

    assert wait_until(renewed_once, timeout=10)
    os.kill(agent.pid, signal.SIGKILL)
    agent.wait(timeout=10)

    def takeover() -> httpx.Response:
        pred = http.get(f"/v1/claims/{claim_id}").json()["claim"]
        return http.post(
            "/v1/claims",
            json={
                "repo": "demo",
                "objective": "finish crashy work",
                "paths": ["src/**"],
                "leaseTtlSeconds": 60,
                "agent": {"id": "successor", "name": "successor"},
                "takeoverOf": {"claimId": claim_id, "expectedClaimRevision": pred["revision"]},
            },
        )

    early = takeover()
    assert early.status_code == 409 and early.json()["code"] == "invalid_transition"

    def expired() -> bool:
        return http.get(f"/v1/claims/{claim_id}").json()["claim"]["status"] == "expired"

    assert wait_until(expired, timeout=15)
    late = takeover()
    assert late.status_code == 201, late.text
    successor = late.json()["claim"]
    assert successor["status"] == "active"
    assert successor["takeoverOf"]["previousOwner"]["id"] == "crashy"
    predecessor = http.get(f"/v1/claims/{claim_id}").json()["claim"]
    assert predecessor["status"] == "taken_over" and predecessor["successorId"] == successor["id"]
    assert http.get("/v1/audit/verify").json()["ok"] is True
    http.close()
