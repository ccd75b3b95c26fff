"""A real ``detente serve`` process the browser tests can stop and start again, and the
API calls the tests make (the same ``/v1`` API the CLI uses)."""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx

#: Runs the console script's entry point with this interpreter (no PATH lookup).
DETENTE = [sys.executable, "-c", "from detente.cli.main import main; main()"]

#: Chromium flags for a headless run without a sandbox, GPU or any background traffic.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    """A TCP port nobody listens on right now (the server binds it again on restarts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return proc.stdout.strip()


class Server:
    """``detente serve --repo REPO --port PORT`` as a child process, restartable."""

    def __init__(self, repo: Path, port: int) -> None:
        self.repo = repo
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[str] | None = None

    def start(self, timeout: float = 30) -> None:
        self.proc = subprocess.Popen(
            [*DETENTE, "--repo", str(self.repo), "serve", "--port", str(self.port), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        stdout = self.proc.stdout
        assert stdout is not None
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"detente serve printed nothing within {timeout} s") from None
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"detente serve failed to start: {err}")
        assert json.loads(line)["listening"] == self.url
        assert httpx.get(f"{self.url}/healthz", timeout=timeout).json()["ok"] is True

    def stop(self, timeout: float = 20) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout)
        self.proc = None

    # ------------------------------------------------------------------ API calls

    def post(self, path: str, body: dict[str, Any], expect: int = 200) -> dict[str, Any]:
        res = httpx.post(f"{self.url}{path}", json=body, timeout=30)
        assert res.status_code == expect, res.text
        return dict(res.json())

    def get(self, path: str) -> dict[str, Any]:
        res = httpx.get(f"{self.url}{path}", timeout=30)
        assert res.status_code == 200, res.text
        return dict(res.json())

    def open_claim(
        self, objective: str, paths: list[str], agent: str, ttl: int = 600
    ) -> dict[str, Any]:
        """``POST /v1/claims`` at the repository's HEAD; returns ``{claim, overlaps, meeting}``."""
        body = {
            "repo": self.repo.name,
            "objective": objective,
            "baseCommit": git(self.repo, "rev-parse", "HEAD"),
            "paths": paths,
            "leaseTtlSeconds": ttl,
            "agent": {"id": agent, "name": agent},
        }
        return self.post("/v1/claims", body, expect=201)
