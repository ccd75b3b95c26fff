"""Benchmark: memory of a detente server holding N live claims (target <= 250 MB at 10,000).

For each N the repository's SQLite store is seeded in-process with N live claims (each on
its own directory, 1 to 3 patterns, one-day leases), then ``detente serve`` starts on it
as a subprocess: it catches up with the whole log (its resident set is taken then, after
a one-claim page), and the bench reads every claim over HTTP (``GET /v1/claims``, then
one page of 100 and ten single claims without semantic advisories) before taking the
server's resident set from ``/proc/<pid>/status`` again: ``VmRSS`` now and ``VmHWM``,
the peak since start. The baseline is the same server over an empty store, in the same
run. The last columns are taken after claims are opened
until their advisories say ``semantic``: the first opening starts loading the embedding
model in the background (when installed), which then embeds every holding claim's
objective, and the openings after that compare in the semantic mode (the model and the
holders' vectors are all in memory then).

Seeding goes through ``open_claim`` in this process (lexical similarity: the records'
mode does not change the server's memory; the base commit by its full id, as the CLI
sends it).

Usage: ``python bench/server_rss.py [--sizes 0,1000,10000] [--no-semantic]``
"""

from __future__ import annotations

import argparse
import json
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
    head = ["git", "rev-parse", "HEAD"]
    oid = subprocess.run(head, cwd=repo, check=True, capture_output=True, text=True).stdout
    forced = os.environ.get("DETENTE_SIMILARITY")
    os.environ["DETENTE_SIMILARITY"] = "lexical"
    client = open_local(repo)
    started = time.monotonic()
    try:
        for i in range(claims):
            paths = [f"src/pkg{i}/**", f"docs/{i}.md", f"tests/test_{i}.py"][: 1 + i % 3]
            body = {
                "repo": "repo",
                "objective": f"rss claim {i}",
                "baseCommit": oid.strip(),
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
        if forced is None:
            os.environ.pop("DETENTE_SIMILARITY", None)
        else:
            os.environ["DETENTE_SIMILARITY"] = forced


def _await_semantic(http: httpx.Client, limit_s: float = 1200.0) -> float:
    """Open claims until one's advisories say ``semantic``; returns the seconds waited."""
    started = time.monotonic()
    for i in range(1_000_000):
        body = {
            "repo": "repo",
            "objective": "rss claim 0",
            "baseCommit": "HEAD",
            "paths": [f"semantic/{i}/**"],
            "leaseTtlSeconds": 86_400,
        }
        r = http.post("/v1/claims", json=body)
        assert r.status_code == 201, r.text
        if "semantic similarity" in json.dumps(r.json().get("semanticOverlaps", [])):
            break
        if time.monotonic() - started > limit_s:
            raise RuntimeError("the server never answered in the semantic mode")
        time.sleep(1.0)
    return time.monotonic() - started


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _status_kb(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def _measure(repo: Path, claims: int, semantic: bool) -> dict[str, float]:
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
            # One small page: the server catches up with the log (its projection built).
            http.get("/v1/claims", params={"limit": 1}).raise_for_status()
            caught_up = _status_kb(server.pid)
            listed = http.get("/v1/claims").raise_for_status().json()["claims"]
            assert len(listed) == claims, (len(listed), claims)
            http.get("/v1/claims", params={"limit": 100}).raise_for_status()
            for claim in listed[:10]:
                http.get(f"/v1/claims/{claim['id']}", params={"include": ""}).raise_for_status()
            kb = _status_kb(server.pid)
            if listed:  # a default read (semantic advisories from the stored records)
                http.get(f"/v1/claims/{listed[0]['id']}").raise_for_status()
            read = _status_kb(server.pid)
            model = read
            if semantic and claims:
                waited = _await_semantic(http)
                print(f"  semantic mode after {waited:.0f} s", file=sys.stderr)
                model = _status_kb(server.pid)
        return {
            "caught_up": caught_up["VmRSS"] / 1024,
            "rss": kb["VmRSS"] / 1024,
            "peak": kb["VmHWM"] / 1024,
            "read": read["VmHWM"] / 1024,
            "model_rss": model["VmRSS"] / 1024,
            "model": model["VmHWM"] / 1024,
        }
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0,1000,10000")
    parser.add_argument(
        "--no-semantic", action="store_true", help="skip the columns after the model loads"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if sizes[0] != 0:
        sizes.insert(0, 0)
    print(f"load average {_load()}\n")
    print(
        "| live claims | RSS MB caught up | RSS MB after listing all | peak RSS MB "
        "| peak vs empty server | target "
        "| peak MB after a claim read | RSS / peak MB once openings are semantic |"
    )
    print("|---:|---:|---:|---:|---:|---|---:|---:|")
    base = None
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            repo = make_repo(Path(tmp))
            print(f"seeding {size} claims ...", file=sys.stderr)
            _seed(repo, size)
            found = _measure(repo, size, not args.no_semantic)
            base = base or found["peak"]
            target = "<= 250 MB" if size >= 10_000 else ""
            after = f"{found['model_rss']:.0f} / {found['model']:.0f}" if size else "-"
            print(
                f"| {size:,} | {found['caught_up']:.0f} | {found['rss']:.0f} "
                f"| {found['peak']:.0f} | "
                f"{found['peak'] / base:.2f}x | {target} | {found['read']:.0f} | {after} |",
                flush=True,
            )
    print(
        f"\nload average after the run: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}"
    )


if __name__ == "__main__":
    main()
