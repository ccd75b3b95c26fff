"""A real ``detente serve`` under hostile input: it keeps answering and stops on SIGTERM."""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from e2e_harness import DETENTE, git

#: The bound on every wait of this module (seconds); SIGTERM must be honoured within 5.
WAIT = 30.0
STOP = 5.0

# Patterns whose overlap no automaton search decides cheaply ("an 'a' k characters before
# the end" against the same with 'b'): each pair spends the whole search budget.
HARD_A = [f"*a{'?' * k}" for k in range(8, 30)]
HARD_B = [f"*b{'?' * k}" for k in range(8, 30)]


@pytest.fixture
def served(repo: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    proc = subprocess.Popen(
        [*DETENTE, "--repo", str(repo), "serve", "--port", "0", "--json", "--log-level", "info"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        url = json.loads(lines.get(timeout=WAIT))["listening"]
        assert httpx.get(f"{url}/healthz", timeout=WAIT).json()["ok"] is True
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def _claim(url: str, repo: Path, agent: str, paths: list[str]) -> dict[str, Any]:
    body = {
        "repo": repo.name,
        "objective": f"{agent} edits generated files",
        "baseCommit": git(repo, "rev-parse", "HEAD"),
        "paths": paths,
        "leaseTtlSeconds": 600,
        "agent": {"id": agent, "name": agent},
    }
    response = httpx.post(f"{url}/v1/claims", json=body, timeout=WAIT)
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_undecidable_patterns_block_while_healthz_answers_and_sigterm_stops_the_server(
    served: tuple[str, subprocess.Popen[str]], repo: Path
) -> None:
    url, proc = served
    _claim(url, repo, "alice", HARD_A)
    answers: queue.Queue[dict[str, Any]] = queue.Queue()
    heavy = threading.Thread(target=lambda: answers.put(_claim(url, repo, "bob", HARD_B)))
    heavy.start()
    # Meanwhile the server answers its health check (the work runs off the event loop).
    health = httpx.get(f"{url}/healthz", timeout=STOP)
    assert health.status_code == 200 and health.json()["version"]
    bob = answers.get(timeout=WAIT)
    heavy.join(timeout=WAIT)
    assert bob["claim"]["status"] == "negotiating"
    [overlap] = bob["overlaps"]
    assert overlap["severity"] == "blocking"
    assert "undecided within budget" in overlap["reason"]
    undecided = [t for t in overlap["targets"] if t.get("undecided")]
    assert undecided and all(t["witness"] is None for t in undecided)

    # The shapes are refused up front, the server unharmed.
    refused = httpx.post(
        f"{url}/v1/claims",
        json={
            "repo": repo.name,
            "objective": "x",
            "baseCommit": git(repo, "rev-parse", "HEAD"),
            "paths": ["a*" * 2000 + "b"],
        },
        timeout=WAIT,
    )
    assert refused.status_code == 422 and refused.json()["field"] == "paths[0]"

    # SIGTERM in the middle of more such work: the server is gone within 5 s.
    def more_work() -> None:
        with contextlib.suppress(httpx.HTTPError):  # cut short by the shutdown: expected
            httpx.get(f"{url}/v1/claims/{bob['claim']['id']}", timeout=WAIT)

    threading.Thread(target=more_work, daemon=True).start()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=STOP)
    assert proc.returncode is not None
