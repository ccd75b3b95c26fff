"""Benchmark: claim open and complete latency while other agents renew and patch memory.

Issue #14 found a claim open taking ~0.5 s instead of 5-20 ms while two workers renewed
their leases and patched their memory sections in a loop against the same server. This
bench reproduces that load and prints the latencies with and without it, in one run.

A detente server runs in a subprocess (uvicorn, SQLite store with ``synchronous=FULL``, a
real git repository whose ``AGENTS.md`` is a section-owned memory document, lexical
similarity). Two *busy* workers each hold a claim owning one section of ``AGENTS.md`` and
loop: read their claim, renew its lease, list the memory documents, patch their section
(the mix of ``tests/storage/test_storage_faults.py``). The measured worker (this
process's main thread) opens a claim on a new file, commits that file with git plumbing
and completes the claim onto ``main``, one round after another.

Phases: ``idle`` (the busy workers paused) and ``contended`` (both looping), ``--rounds``
rounds each, in alternating blocks so a load spike on this shared machine hits both
alike; then ``first after a start``: ``--starts`` times, the server is restarted, the busy
workers loop against it until two of their operations answered, and the one round right
after is measured (the pattern of the kill -9 test, whose servers each live for a few
acknowledgements). Reported: p50 and p99 of open and complete, the ratio to the idle p50,
the busy workers' operations per second, and the load average. Run it with
``PYTHONPATH`` on another checkout's ``src`` for a before/after table.

Usage: ``python bench/contention.py [--rounds 60] [--starts 8] [--store sqlite|postgres]``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from _servers import spawn_server

_AGENTS = "# AGENTS\n\n## W1\n\nnone\n\n## W2\n\nnone\n"


def _git(repo: Path, *args: str, env: dict[str, str] | None = None, stdin: str = "") -> str:
    out = subprocess.run(
        ["git", *args],
        cwd=repo,
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return out.stdout.strip()


def _make_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "AGENTS.md").write_text(_AGENTS)
    _git(repo, "add", "AGENTS.md")
    _git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "agents")
    return repo


def _commit_file(repo: Path, parent: str, name: str) -> str:
    """A commit on top of ``parent`` adding ``name`` (plumbing, no checkout)."""
    index = {"GIT_INDEX_FILE": str(repo / ".git" / "bench-index")}
    _git(repo, "read-tree", parent, env=index)
    blob = _git(repo, "hash-object", "-w", "--stdin", stdin=f"{name}\n")
    _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}", env=index)
    tree = _git(repo, "write-tree", env=index)
    who = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
    who |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    return _git(repo, "commit-tree", tree, "-p", parent, "-m", f"add {name}", env=who)


def _open(http: httpx.Client, who: str, path: str, base: str, **extra: Any) -> dict[str, Any]:
    body = {
        "repo": "repo",
        "objective": f"{who} edits {path}",
        "baseCommit": base,
        "paths": [path],
        "leaseTtlSeconds": 600,
        "agent": {"id": who, "name": who},
        **extra,
    }
    r = http.post("/v1/claims", json=body)
    assert r.status_code == 201, r.text
    claim: dict[str, Any] = r.json()["claim"]
    return claim


class Busy:
    """A worker renewing its claim and patching its memory section in a loop."""

    def __init__(self, base_url: str, key: str, holder: dict[str, Any]) -> None:
        self.base_url, self.key, self.holder = base_url, key, holder
        self.run = threading.Event()  # set: loop; clear: pause
        self.idle = threading.Event()  # set while paused between rounds
        self.stop = threading.Event()
        self.ops = 0
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        n = 0
        while not self.stop.is_set():
            if not self.run.wait(timeout=0.05):
                self.idle.set()
                continue
            self.idle.clear()
            if not self.run.is_set():  # paused between the two checks
                continue
            n += 1
            try:
                with httpx.Client(base_url=self.base_url, timeout=60) as http:
                    self._round(http, n)
            except (AssertionError, ValueError, KeyError) as exc:
                self.errors.append(f"{self.key}: {exc!r}")
                self.idle.set()
                return

    def pause(self) -> None:
        """Stop looping; returns once the round in progress has ended."""
        self.run.clear()
        self.idle.wait(timeout=60)

    def _round(self, http: httpx.Client, n: int) -> None:
        claim = http.get(f"/v1/claims/{self.holder['id']}").json()["claim"]
        r = http.post(
            f"/v1/claims/{claim['id']}/renew",
            json={
                "expectedLeaseRevision": claim["lease"]["revision"],
                "expectedClaimRevision": claim["revision"],
                "ttlSeconds": 600,
            },
        )
        assert r.status_code == 200, r.text
        renewed = r.json()["claim"]
        self.ops += 1
        for _ in range(20):  # the other worker moves the file hash: re-read and retry
            docs = http.get("/v1/memory/documents", params={"repo": "repo"}).json()["documents"]
            [doc] = [d for d in docs if d["path"] == "AGENTS.md"]
            [section] = [s for s in doc["sections"] if s["key"] == self.key]
            r = http.post(
                "/v1/memory/sections/patch",
                json={
                    "repo": "repo",
                    "path": "AGENTS.md",
                    "sectionKey": self.key,
                    "expectedSectionRevision": section["revision"],
                    "expectedFileHash": doc["fileHash"],
                    "claimId": renewed["id"],
                    "fencingToken": renewed["fencingToken"],
                    "patch": {"body": f"\npatch {n}\n\n"},
                },
            )
            if r.status_code == 200:
                self.ops += 1
                return
            assert r.status_code == 409, r.text


_ROUNDS = itertools.count(1)


def _round(http: httpx.Client, repo: Path) -> tuple[float, float]:
    """Open, commit, complete one claim; returns (open ms, complete ms)."""
    tip = _git(repo, "rev-parse", "refs/heads/main")
    name = f"done/{next(_ROUNDS)}.txt"
    t0 = time.perf_counter()
    claim = _open(http, "w0", name, tip)
    t1 = time.perf_counter()
    head = _commit_file(repo, tip, name)
    t2 = time.perf_counter()
    r = http.post(
        f"/v1/claims/{claim['id']}/complete",
        json={
            "expectedClaimRevision": claim["revision"],
            "fencingToken": claim["fencingToken"],
            "expectedBaseRef": {"ref": "refs/heads/main", "oid": tip},
            "evidence": {"headCommit": head, "changedFiles": [name], "tests": []},
        },
    )
    t3 = time.perf_counter()
    assert r.status_code == 200, r.text
    return (t1 - t0) * 1000, (t3 - t2) * 1000


def _stats(ms: list[float]) -> tuple[float, float]:
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.99))]


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _store_url(kind: str, tmp: str) -> tuple[str, Any]:
    if kind == "sqlite":
        return f"sqlite:///{tmp}/detente.db", None
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from storage.servers import PostgresServer, postgres_bindir

    bindir = postgres_bindir()
    if bindir is None:
        sys.exit("--store postgres needs PostgreSQL (initdb) installed: see .ci/run")
    server = PostgresServer(bindir, durable=True).start()
    return server.new_database(), server


class Server:
    """``detente serve`` on one repository and store, restartable."""

    def __init__(self, repo: Path, url: str) -> None:
        self.argv = [sys.executable, "-m", "detente", "serve", "--repo", str(repo)]
        self.argv += ["--store", url, "--log-level", "warning", "--port"]
        self.env = {**os.environ, "DETENTE_SIMILARITY": "lexical"}
        self.proc: subprocess.Popen[bytes] | None = None
        self.base_url = ""

    def start(self) -> str:
        out = subprocess.DEVNULL
        self.proc, port = spawn_server(
            self.argv, "detente serve", env=self.env, stdout=out, stderr=out
        )
        self.base_url = f"http://127.0.0.1:{port}"
        return self.base_url

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None


Times = dict[str, tuple[list[float], list[float]]]


def _steady(
    http: httpx.Client, repo: Path, busy: list[Busy], args: argparse.Namespace, times: Times
) -> dict[str, float]:
    """Alternating idle and contended blocks; returns the busy operations per second."""
    ops = {"idle": 0.0, "contended": 0.0}
    spent = {"idle": 0.0, "contended": 0.0}
    for _ in range(max(1, args.rounds // args.block)):
        for phase in ("idle", "contended"):
            for b in busy:
                b.run.set() if phase == "contended" else b.pause()
            before = sum(b.ops for b in busy)
            t0 = time.perf_counter()
            for _ in range(args.block):
                o, c = _round(http, repo)
                times[phase][0].append(o)
                times[phase][1].append(c)
            spent[phase] += time.perf_counter() - t0
            ops[phase] += sum(b.ops for b in busy) - before
    for b in busy:
        b.pause()
    return {phase: ops[phase] / spent[phase] for phase in ops}


def _after_starts(server: Server, repo: Path, busy: list[Busy], starts: int, times: Times) -> None:
    """The round right after each of ``starts`` restarts, with the busy workers looping
    (as in the kill -9 test, whose servers each live for a few acknowledgements)."""
    for _ in range(starts):
        server.stop()
        base_url = server.start()
        before = sum(b.ops for b in busy)
        for b in busy:
            b.base_url = base_url
            b.run.set()
        deadline = time.monotonic() + 60
        while sum(b.ops for b in busy) < before + 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        with httpx.Client(base_url=base_url, timeout=60) as http:
            o, c = _round(http, repo)
        times["first after a start"][0].append(o)
        times["first after a start"][1].append(c)
        for b in busy:
            b.pause()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60, help="measured rounds per phase")
    parser.add_argument("--block", type=int, default=10, help="rounds per alternating block")
    parser.add_argument("--starts", type=int, default=8, help="restarts measured")
    parser.add_argument("--store", default="sqlite", choices=["sqlite", "postgres"])
    args = parser.parse_args()
    phases = ("idle", "contended", "first after a start")
    times: Times = {phase: ([], []) for phase in phases}
    with tempfile.TemporaryDirectory() as tmp:
        repo = _make_repo(Path(tmp))
        url, pg = _store_url(args.store, tmp)
        server = Server(repo, url)
        busy: list[Busy] = []
        try:
            base_url = server.start()
            with httpx.Client(base_url=base_url, timeout=60) as http:
                r = http.post(
                    "/v1/memory/documents",
                    json={"repo": "repo", "path": "AGENTS.md", "class": "section_owned"},
                )
                assert r.status_code == 201, r.text
                tip = _git(repo, "rev-parse", "HEAD")
                for key in ("w1", "w2"):
                    impacts = [{"path": "AGENTS.md", "sections": [key]}]
                    holder = _open(http, key, f"{key}/**", tip, memoryImpacts=impacts)
                    busy.append(Busy(base_url, key, holder))
                for b in busy:
                    b.thread.start()
                for _ in range(3):  # warm-up
                    _round(http, repo)
                rates = _steady(http, repo, busy, args, times)
            _after_starts(server, repo, busy, args.starts, times)
            errors = [e for b in busy for e in b.errors]
            assert not errors, errors
        finally:
            for b in busy:
                b.stop.set()
            for b in busy:
                b.thread.join(timeout=30)
            server.stop()
            if pg is not None:
                pg.close()
    print(
        f"claim open / complete over HTTP while 2 workers renew + patch memory "
        f"({args.store}, loopback, lexical similarity; {len(times['idle'][0])} rounds idle "
        f"and contended, {args.starts} starts; load average {_load()})\n"
    )
    print(
        "| phase | busy ops/s | open p50 ms | open p99 ms | complete p50 ms "
        "| complete p99 ms | open p50 vs idle | complete p50 vs idle |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    idle_open, _ = _stats(times["idle"][0])
    idle_done, _ = _stats(times["idle"][1])
    for phase in phases:
        o50, o99 = _stats(times[phase][0])
        c50, c99 = _stats(times[phase][1])
        rate = f"{rates[phase]:.0f}" if phase in rates else "looping"
        print(
            f"| {phase} | {rate} | {o50:.1f} | {o99:.1f} | {c50:.1f} | {c99:.1f} "
            f"| {o50 / idle_open:.2f}x | {c50 / idle_done:.2f}x |"
        )


if __name__ == "__main__":
    main()
