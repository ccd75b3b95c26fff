"""Benchmark: ``POST /v1/claims`` latency over HTTP with 200 and 3,000 live claims.

A detente server runs in a subprocess (uvicorn, SQLite store with ``synchronous=FULL``, a
real git repository), with N live claims opened beforehand through the service in another
process (not timed). The client (this process, ``httpx`` on loopback) then opens claims,
each on its own paths, in two ways:

- ``1 client``: one after another (the latency an agent sees on an idle server);
- ``8 clients``: eight threads at once (group commit: the opens waiting on the repository
  share one store transaction).

Same-run baseline: ``GET /v1/repos`` (the HTTP round trip through the same middleware,
no store write), measured call by call in turn with the opens so a load spike on this
shared machine hits both alike. Reported: p50, p99 and ratios against the baseline's p50,
the load average, and the server's CPU per opening (its ``/proc`` user + system time
over the one-client phase, less the CPU of as many baseline reads, measured alone
right after): the figure a busy machine stretches least.

Each opening names its base commit by its full object id, as the CLI sends it (``--base
HEAD`` sends the symbolic name instead: the server then runs ``git rev-parse`` on every
opening).

``--case new-files``: a repository whose claims name paths that do not exist yet (agents
about to create files). Its tree is empty (one empty commit), and every claim, the N
live ones and the timed ones alike, names one pattern drawn from ansible's path list
(``--paths``, default ``/work/shared/data/ansible-paths.txt``, a fixed seed): 70% an
exact file, 20% its directory's ``dir/**``, 10% ``dir/*.ext``. Many of them meet, only
in paths nobody has, and broad ``dir/**`` claims gather crowded rooms: the case where an
opening used to judge every party of the rooms it joined again. Target: p50 at 3,000
live claims <= 1.5x p50 at 200 (1 client).

``--compare-src DIR`` runs a second server from another checkout's ``src/`` (say the
previous ``main``) on a copy of the same seeded store, right after: a before/after pair
in one run, its rows labelled ``other``.

Usage: ``python bench/claim_open.py [--sizes 200,3000] [--calls 200] [--semantic]
[--case existing|new-files] [--compare-src DIR]``. The
semantic model (an optional extra) is switched off in the server
(``DETENTE_SIMILARITY=lexical``) unless ``--semantic`` is given: its embedding is a
separate, per-opening cost. With ``--semantic`` the timed openings start once the server
answers in the semantic mode (the model loads in the background after a start, and the
openings before it compare lexically).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import httpx
from _servers import make_repo, spawn_server

_SEED = """
import json, sys
from detente.client.inprocess import InProcessClient
from pathlib import Path
from detente.runtime import build_service
service = build_service([Path(sys.argv[1])], store_url=sys.argv[2])
client = InProcessClient(service)
patterns = json.loads(Path(sys.argv[4]).read_text()) if len(sys.argv) > 4 else None
for i in range(int(sys.argv[3])):
    paths = [patterns[i]] if patterns else [f"live/pkg{i}/**"]
    client.open_claim({"repo": "repo", "objective": f"live claim {i}", "baseCommit": "HEAD",
                       "paths": paths, "leaseTtlSeconds": 3600})
service.save_snapshots()
service.store.close()
"""

_SERVER = """
import sys
from pathlib import Path
from detente.runtime import build_service
from detente.server import make_server
service = build_service([Path(sys.argv[1])], store_url=sys.argv[2])
make_server(service, port=int(sys.argv[3]), log_level="error").run()
"""


_BASE = ["HEAD"]
#: The timed openings' patterns in the ``new-files`` case (empty: each its own subtree).
_PATTERNS: list[str] = []


def _body(tag: str, i: int) -> dict[str, Any]:
    paths = [f"bench/{tag}/{i}/**"]
    if _PATTERNS:
        paths = [_PATTERNS[(zlib.crc32(tag.encode()) + i * 7919) % len(_PATTERNS)]]
    return {
        "repo": "repo",
        "objective": f"bench {tag} {i}",
        "baseCommit": _BASE[0],
        "paths": paths,
        "leaseTtlSeconds": 3600,
    }


def _new_file_patterns(paths_file: Path, count: int, seed: int) -> list[str]:
    """``count`` patterns over ansible's paths (none of which the repository has): 70%
    an exact file, 20% its directory's ``dir/**``, 10% ``dir/*.ext`` (a file at the
    root stays exact)."""
    import random

    rng = random.Random(seed)
    files = [p for p in paths_file.read_text().split() if p]
    out: list[str] = []
    for _ in range(count):
        path = rng.choice(files)
        roll = rng.random()
        folder, _, name = path.rpartition("/")
        if roll < 0.7 or not folder:
            out.append(path)
        elif roll < 0.9:
            out.append(f"{folder}/**")
        else:
            ext = name.rpartition(".")[2] if "." in name else "txt"
            out.append(f"{folder}/*.{ext}")
    return out


def _percentiles(ms: list[float]) -> tuple[float, float]:
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.99))]


def _sequential(base: str, calls: int, tag: str) -> tuple[list[float], list[float]]:
    """Opens and baseline reads, in turn (after a warm-up of 10 each)."""
    opens: list[float] = []
    reads: list[float] = []
    with httpx.Client(base_url=base, timeout=60) as http:
        for i in range(calls + 10):
            t0 = time.perf_counter()
            r = http.post("/v1/claims", json=_body(tag, i))
            t1 = time.perf_counter()
            assert r.status_code == 201, r.text
            http.get("/v1/repos").raise_for_status()
            t2 = time.perf_counter()
            if i >= 10:
                opens.append((t1 - t0) * 1000)
                reads.append((t2 - t1) * 1000)
    return opens, reads


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _reads_cpu(base: str, calls: int, pid: int) -> float:
    """The server's CPU seconds for ``calls`` baseline reads alone."""
    with httpx.Client(base_url=base, timeout=60) as http:
        http.get("/v1/repos").raise_for_status()
        before = _cpu_s(pid)
        for _ in range(calls):
            http.get("/v1/repos").raise_for_status()
        return _cpu_s(pid) - before


def _concurrent(base: str, calls: int, tag: str, threads: int) -> tuple[list[float], float]:
    """Opens from ``threads`` clients at once: latencies and opens per second."""
    per = max(1, calls // threads)
    lat: list[list[float]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads + 1)

    def client(t: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as http:
            http.get("/v1/repos")
            start.wait()
            for i in range(per):
                t0 = time.perf_counter()
                r = http.post("/v1/claims", json=_body(f"{tag}-{t}", i))
                lat[t].append((time.perf_counter() - t0) * 1000)
                assert r.status_code == 201, r.text

    workers = [threading.Thread(target=client, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    t0 = time.perf_counter()
    for w in workers:
        w.join()
    return [x for per_client in lat for x in per_client], threads * per / (time.perf_counter() - t0)


def _await_semantic(base: str, limit_s: float = 600.0) -> float:
    """Open claims whose objective repeats a live one until the advisory says ``semantic``
    (the model has loaded and the holders are embedded); returns the seconds waited."""
    started = time.perf_counter()
    with httpx.Client(base_url=base, timeout=60) as http:
        for i in range(100_000):
            body = {**_body("warm", i), "objective": "live claim 0"}
            r = http.post("/v1/claims", json=body)
            assert r.status_code == 201, r.text
            if "semantic similarity" in json.dumps(r.json().get("semanticOverlaps", [])):
                break
            if time.perf_counter() - started > limit_s:
                raise RuntimeError("the server never answered in the semantic mode")
            time.sleep(0.5)
    return time.perf_counter() - started


def _measure(
    repo: Path, url: str, size: int, label: str, env: dict[str, str], args: argparse.Namespace
) -> None:
    """Serve ``url`` (``env`` picks the sources) and print the 1- and 8-client rows."""
    proc, port = spawn_server(
        [sys.executable, "-c", _SERVER, str(repo), url], "detente server", env=env
    )
    try:
        base = f"http://127.0.0.1:{port}"
        if args.semantic:
            waited = _await_semantic(base)
            print(f"  (semantic mode after {waited:.1f} s)", file=sys.stderr)
        before = _cpu_s(proc.pid)
        opens, reads = _sequential(base, args.calls, "seq")
        spent = _cpu_s(proc.pid) - before - _reads_cpu(base, len(reads) + 10, proc.pid)
        p50, p99 = _percentiles(opens)
        b50, _ = _percentiles(reads)
        rate = 1000 / statistics.mean(opens)
        print(
            f"| {label}{size:,} | 1 | {len(opens)} | {p50:.2f} | {p99:.2f} | {rate:.0f} "
            f"| {b50:.2f} | {p50 / b50:.1f}x | {spent * 1000 / (len(opens) + 10):.2f} |",
            flush=True,
        )
        lat, rate = _concurrent(base, args.calls, "par", 8)
        p50, p99 = _percentiles(lat)
        print(
            f"| {label}{size:,} | 8 | {len(lat)} | {p50:.2f} | {p99:.2f} | {rate:.0f} "
            f"| {b50:.2f} | {p50 / b50:.1f}x | - |",
            flush=True,
        )
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,3000")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--semantic", action="store_true", help="keep the semantic model on")
    parser.add_argument(
        "--base", default="oid", choices=["oid", "HEAD"], help="how openings name the base"
    )
    parser.add_argument(
        "--case",
        default="existing",
        choices=["existing", "new-files"],
        help="claims on their own subtrees, or on ansible paths that do not exist yet",
    )
    parser.add_argument(
        "--paths", default="/work/shared/data/ansible-paths.txt", help="the new-files paths"
    )
    parser.add_argument(
        "--compare-src",
        default="",
        help="a src/ directory of another checkout: its server runs on a copy of the same "
        "seeded store right after (rows labelled 'other')",
    )
    args = parser.parse_args()
    new_files = args.case == "new-files"
    if new_files:
        # Not Python's hash of a str (salted per process): a fixed stream of patterns.
        _PATTERNS[:] = _new_file_patterns(Path(args.paths), 4096, seed=32)
    env = dict(os.environ)
    if not args.semantic:
        env["DETENTE_SIMILARITY"] = "lexical"
    mode = "semantic" if args.semantic else "lexical"
    print(
        f"POST /v1/claims over HTTP (loopback, SQLite, 2 cores, {mode} similarity, base "
        f"commit as {'a full id' if args.base == 'oid' else 'HEAD'}; case {args.case}; "
        f"load average {_load()})\n"
    )
    print(
        "| live claims | clients | opens | p50 ms | p99 ms | opens/s "
        "| baseline GET /v1/repos p50 ms | p50 vs baseline | server CPU ms per open |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            repo = make_repo(Path(tmp))
            head = ["git", "rev-parse", "HEAD"]
            oid = subprocess.run(head, cwd=repo, check=True, capture_output=True, text=True)
            _BASE[0] = oid.stdout.strip() if args.base == "oid" else "HEAD"
            url = f"sqlite:///{tmp}/detente.db"
            seed = [sys.executable, "-c", _SEED, str(repo), url, str(size)]
            if new_files:
                live = _new_file_patterns(Path(args.paths), size, seed=size)
                Path(tmp, "live.json").write_text(json.dumps(live))
                seed.append(str(Path(tmp, "live.json")))
            # The seeding's own records need no model (a lexical record costs the server
            # nothing later); the server loads it with --semantic.
            subprocess.run(seed, check=True, env={**env, "DETENTE_SIMILARITY": "lexical"})
            servers = [("", env)]
            if args.compare_src:  # the same store, seeded once, served by both in turn
                for suffix in ("", "-wal", "-shm"):
                    if Path(f"{tmp}/detente.db{suffix}").exists():
                        shutil.copy(f"{tmp}/detente.db{suffix}", f"{tmp}/other.db{suffix}")
                servers.append(("other ", {**env, "DETENTE_SRC": args.compare_src}))
            for label, server_env in servers:
                db = f"sqlite:///{tmp}/{'other' if label else 'detente'}.db"
                _measure(repo, db, size, label, server_env, args)
    print(f"\nload average after the run: {_load()}")


if __name__ == "__main__":
    main()
