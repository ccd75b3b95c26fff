"""``detente serve`` enforces detente.toml, with its own flags taking precedence."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from e2e_harness import DETENTE

from served_process import first_line


def _detente(*args: str) -> tuple[int, dict[str, object]]:
    done = subprocess.run([*DETENTE, *args, "--json"], capture_output=True, text=True, timeout=60)
    return done.returncode, json.loads(done.stdout)


def test_a_serve_flag_overrides_the_config_file_for_every_client(repo: Path) -> None:
    (repo / "detente.toml").write_text("[policy]\nmax-ttl-seconds = 600\n", encoding="utf-8")
    proc = subprocess.Popen(
        [*DETENTE, "--repo", str(repo), "serve", "--port", "0", "--max-ttl", "90", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = first_line(proc, timeout=20)
        assert line, proc.stderr.read() if proc.stderr else "no output"
        url = json.loads(line)["listening"]
        opening = ("--server", url, "--repo", str(repo), "claim", "open", "-o", "x", "-p", "docs")
        code, problem = _detente(*opening, "--ttl", "120")
        assert code == 2 and "between 1 and 90" in str(problem["detail"]), problem
        code, body = _detente(*opening, "--ttl", "90")
        assert code == 0 and body["mode"] == "server", body
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_serve_refuses_a_bad_policy_flag_before_listening(repo: Path) -> None:
    done = subprocess.run(
        [*DETENTE, "--repo", str(repo), "serve", "--port", "0", "--takeover-grace", "-1", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    problem = json.loads(done.stdout)
    assert problem["field"] == "policy.takeover-grace-seconds"
    assert "--takeover-grace" in problem["detail"]
