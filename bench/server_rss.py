"""Benchmark: memory of a detente server holding N live claims (target <= 250 MB at 10,000).

For each N the repository's SQLite store is seeded in-process with N live claims (each on
its own directory, 1 to 3 patterns, one-day leases), then ``detente serve`` starts on it
as a subprocess: it catches up with the whole log, and the bench reads every claim over
HTTP (``GET /v1/claims``, then one page of 100 and ten single claims without semantic
advisories) before taking the server's resident set from ``/proc/<pid>/status``:
``VmRSS`` now and ``VmHWM``, the peak since start. The baseline is the same server over
an empty store, in the same run. The last column is the peak after one default claim read,
whose semantic advisories load the embedding model (once per process, when installed).

Usage: ``python bench/server_rss.py [--sizes 0,1000,10000]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _servers import make_repo, spawn_server

from detente.client.connect import open_local


def _seed(repo: Path, claims: int) -> None:
    client = open_local(repo)
    started = time.monotonic()
    try:
        for i in range(claims):
            paths = [f"src/pkg{i}/**", f"docs/{i}.md", f"tests/test_{i}.py"][: 1 + i % 3]
            body = {
                "repo": "repo",
                "objective": f"rss claim {i}",
                "baseCommit": "HEAD",
                "paths": paths,
                "leaseTtlSeconds": 86_400,
                "agent": {"id": f"agent-{i % 50}", "name": f"agent-{i % 50}"},
            }
            client.open_claim(body)
            if i % 1000 == 999:
                spent = time.monotonic() - started
                print(f"  seeded {i + 1}/{claims} claims ({spent:.0f} s)", file=sys.stderr)
    finally:
        client.close()


def _status_kb(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def _measure(repo: Path, claims: int) -> dict[str, float]:
    env = {**os.environ, "DETENTE_LOCAL": "0"}
    server, port = spawn_server(
        [
            sys.executable,
            "-c",
            "from detente.cli.main import main; main()",
            "serve",
            "--log-level",
            "warning",
            "--port",
        ],
        "detente serve",
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as http:
            listed = http.get("/v1/claims").raise_for_status().json()["claims"]
            assert len(listed) == claims, (len(listed), claims)
            http.get("/v1/claims", params={"limit": 100}).raise_for_status()
            for claim in listed[:10]:
                http.get(f"/v1/claims/{claim['id']}", params={"include": ""}).raise_for_status()
            kb = _status_kb(server.pid)
            # The semantic advisories load the embedding model once per process.
            http.get(f"/v1/claims/{listed[0]['id']}" if listed else "/healthz").raise_for_status()
            model = _status_kb(server.pid)
        return {
            "rss": kb["VmRSS"] / 1024,
            "peak": kb["VmHWM"] / 1024,
            "model": model["VmHWM"] / 1024,
        }
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,1000,10000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if sizes[0] != 0:
        sizes.insert(0, 0)
    print(
        "| live claims | RSS MB | peak RSS MB | peak vs empty server | target "
        "| peak MB after a semantic read |"
    )
    print("|---:|---:|---:|---:|---|---:|")
    base = None
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            repo = make_repo(Path(tmp))
            print(f"seeding {size} claims ...", file=sys.stderr)
            _seed(repo, size)
            found = _measure(repo, size)
            base = base or found["peak"]
            target = "<= 250 MB" if size >= 10_000 else ""
            print(
                f"| {size} | {found['rss']:.0f} | {found['peak']:.0f} | "
                f"{found['peak'] / base:.2f}x | {target} | {found['model']:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
