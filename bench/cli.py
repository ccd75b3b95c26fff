"""Benchmark: wall time of one ``detente`` command, against ``git status`` and ``python -c pass``.

Agents run ``detente claim status`` before and after every edit, so the whole process is
timed: interpreter start, imports, opening the store, catching up with the log, the read,
the JSON output. For each size (events in the repository's SQLite store: 100 live claims,
then lease renewals up to the size) every command runs ``--runs`` times, the commands
taking turns run by run so that a load spike on this shared machine hits all of them
alike. Reported per command: the median and the best wall time, the median CPU time
(user + system, of the child; robust to other load on the machine) and the ratios of the
median wall and CPU times to those of the ``python -c pass`` baseline of the same run.

Every command runs with its bytecode cached (``PYTHONPYCACHEPREFIX`` in a temporary
directory, written by the warm-up round), as an installed package has it.

Commands (local mode, ``DETENTE_LOCAL=1``, in the repository):

- ``python -c pass``: the interpreter alone (baseline);
- ``git status``: what an agent already pays per tool use (baseline);
- ``detente --help``: target <= 0.10 s;
- ``detente claim status ID --json``: target <= 0.15 s at 10,000 events;
- ``detente claim list --json``: every claim (100);
- ``detente claim status ID --json`` without ``DETENTE_LOCAL`` and with no server running:
  what a user pays by default (the probe of ``127.0.0.1:7420`` finds nothing, then local
  mode; skipped when something listens there);
- ``detente claim status ID --json`` against ``detente serve`` on the same store
  (``DETENTE_URL``): server mode.

Usage: ``python bench/cli.py [--sizes 100,10000] [--runs 15]``
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _servers import make_repo, spawn_server

from detente.client.connect import open_local

_DETENTE = [sys.executable, "-c", "from detente.cli.main import main; main()"]
_CLAIMS = 100
_TARGETS = {"--help": 0.10, "claim status": 0.15}


def _seed(repo: Path, events: int) -> str:
    """Open ``_CLAIMS`` claims, then renew them in turn until the log holds ``events``."""
    client = open_local(repo)
    try:
        ids = []
        for i in range(_CLAIMS):
            body = {
                "repo": "repo",
                "objective": f"bench claim {i}",
                "baseCommit": "HEAD",
                "paths": [f"src/pkg{i}/**", f"docs/{i}.md"],
                "leaseTtlSeconds": 36000,
            }
            ids.append(client.open_claim(body)["claim"]["id"])
        head = int(client.health()["head"])
        started, turn = time.monotonic(), 0
        revisions = {i: client.get_claim(i, include=[])["claim"] for i in ids}
        while head < events:
            claim = revisions[ids[turn % len(ids)]]
            renewed = client.renew(
                claim["id"],
                expected_lease_revision=claim["lease"]["revision"],
                expected_claim_revision=claim["revision"],
                ttl_seconds=36000,
            )["claim"]
            revisions[claim["id"]] = renewed
            head, turn = head + 1, turn + 1
            if turn % 1000 == 0:
                rate = turn / (time.monotonic() - started)
                print(f"  seeded {head}/{events} events ({rate:.0f}/s)", file=sys.stderr)
        return str(ids[0])
    finally:
        client.close()


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and child CPU seconds (user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,10000")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    env = {**os.environ, "DETENTE_LOCAL": "1"}
    env.pop("DETENTE_URL", None)
    # An installed package has its bytecode compiled (pip does it); a machine that sets
    # PYTHONDONTWRITEBYTECODE would make every run compile every module from source.
    # The warm-up round writes the bytecode into a private cache instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    pycache = tempfile.TemporaryDirectory(prefix="detente-bench-pycache-")
    env["PYTHONPYCACHEPREFIX"] = pycache.name
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print()
    print(
        "| events | command | median s | best s | median CPU s | vs python -c pass "
        "| CPU vs python -c pass | target |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---|")
    for size in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            repo = make_repo(Path(tmp))
            print(f"seeding {size} events ...", file=sys.stderr)
            claim_id = _seed(repo, size)
            status = [*_DETENTE, "claim", "status", claim_id, "--json"]
            commands: dict[str, tuple[list[str], dict[str, str]]] = {
                "python -c pass": ([sys.executable, "-c", "pass"], env),
                "git status": (["git", "status"], env),
                "detente --help": ([*_DETENTE, "--help"], env),
                "detente claim status ID --json": (status, env),
                "detente claim list --json": ([*_DETENTE, "claim", "list", "--json"], env),
            }
            probing = {k: v for k, v in env.items() if k != "DETENTE_LOCAL"}
            if _port_is_free(7420):
                commands["claim status, default (no server: probe, then local)"] = (
                    status,
                    probing,
                )
            server, port = spawn_server(
                [*_DETENTE, "serve", "--repo", str(repo), "--port"],
                "detente serve",
                env=probing,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            served = {**probing, "DETENTE_URL": f"http://127.0.0.1:{port}"}
            commands["claim status, server mode (DETENTE_URL)"] = (status, served)
            walls: dict[str, list[float]] = {name: [] for name in commands}
            cpus: dict[str, list[float]] = {name: [] for name in commands}
            try:
                for run in range(args.runs + 1):
                    for name, (command, command_env) in commands.items():
                        wall, cpu = _timed(command, repo, command_env)
                        if run:  # the first round warms the page cache and the .pyc files
                            walls[name].append(wall)
                            cpus[name].append(cpu)
                    print(f"  run {run}/{args.runs}", file=sys.stderr)
            finally:
                server.terminate()
                server.wait(timeout=30)
            base = statistics.median(walls["python -c pass"])
            base_cpu = statistics.median(cpus["python -c pass"])
            for name in commands:
                median, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
                target = next((f"<= {t:.2f} s" for k, t in _TARGETS.items() if k in name), "")
                print(
                    f"| {size} | `{name}` | {median:.3f} | {min(walls[name]):.3f} | "
                    f"{cpu:.3f} | {median / base:.1f}x | {cpu / base_cpu:.1f}x | {target} |"
                )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
