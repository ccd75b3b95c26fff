"""A real ``detente serve`` process: claims opened through the CLI, events streamed back."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from e2e_harness import DETENTE, git
from typer.testing import CliRunner

from detente.cli.main import app


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """The process's first stdout line, waited for at most ``timeout`` seconds."""
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        pytest.fail(f"detente serve printed nothing within {timeout} s")


@pytest.fixture
def server(repo: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``detente serve --port 0`` (the OS picks a free port); yields its URL and process."""
    proc = subprocess.Popen(
        [*DETENTE, "--repo", str(repo), "serve", "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _first_line(proc, timeout=20)
        assert line, proc.stderr.read() if proc.stderr else "no output"
        url = json.loads(line)["listening"]
        # The socket is already listening: this request waits for uvicorn to accept it.
        assert httpx.get(f"{url}/healthz", timeout=20).json()["ok"] is True
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_a_real_server_records_cli_claims_and_streams_their_events_in_order(
    server: tuple[str, subprocess.Popen[str]], repo: Path
) -> None:
    url, proc = server
    runner = CliRunner()

    def cli(*args: str) -> tuple[int, dict[str, object]]:
        result = runner.invoke(app, ["--server", url, "--repo", str(repo), *args, "--json"])
        return result.exit_code, json.loads(result.stdout)

    code_a, first = cli("claim", "open", "-o", "rework app", "-p", "src/app/**", "--agent", "a")
    code_b, second = cli("claim", "open", "-o", "fix api", "-p", "src/app/api.py", "--agent", "b")
    watch = subprocess.run(
        [*DETENTE, "--server", url, "events", "watch", "--since", "0", "--count", "5", "--json"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    proc.terminate()
    proc.wait(timeout=15)

    assert (code_a, code_b) == (0, 6)
    assert first["mode"] == "server"
    claim_a = first["claim"]
    assert isinstance(claim_a, dict)
    assert git(Path(str(claim_a["worktree"])), "rev-parse", "HEAD") == claim_a["baseCommit"]
    overlaps = second["overlaps"]
    assert isinstance(overlaps, list)
    assert overlaps[0]["targets"][0]["witness"] == "src/app/api.py"
    assert watch.returncode == 0, watch.stderr
    events = [json.loads(line) for line in watch.stdout.splitlines()]
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5]
    assert [e["type"] for e in events[:3]] == [
        "claim.announced",
        "claim.activated",
        "claim.announced",
    ]
    assert events[0]["subject"] == f"claim/{claim_a['id']}"
    assert proc.returncode == 0, "SIGTERM must stop the server gracefully"
