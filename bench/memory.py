"""Benchmark: memory appends that land on the integration branch, against ``git commit``.

A real git repository (``main`` checked out in its own working tree, which follows every
memory commit) and a SQLite store (``synchronous=FULL``). Eight writers, each holding its
own claim, append entries to one append-only document through the in-process client
(the one door: ``Operations``, the service, group commit, one commit per batch: its
objects written directly, one ``git update-ref``; main's checkout follows off the command
path) for ``--seconds``. Reported: acknowledged appends per second, p50/p99 latency of an
append, the git commits made (``git rev-list --count``), appends per commit, and the
follows of main's checkout (several queued commits are followed as one).

Same-run baseline: one writer committing the same change with ``git commit -q -a`` in a
loop (append the entry to the file, commit) in a second repository for the same time:
what a process that wrote the file and committed it itself would manage. Every append
is then checked on the branch (``git show main:DECISIONS.md``: each entry exactly once).

Usage: ``python bench/memory.py [--seconds 30] [--writers 8]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from detente.client.inprocess import InProcessClient
from detente.runtime import build_service


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def _repo(root: Path) -> Path:
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "bench@example.com")
    _git(root, "config", "user.name", "bench")
    (root / "DECISIONS.md").write_text("# Decisions\n")
    (root / "README.md").write_text("bench\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "init")
    return root


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _detente(root: Path, writers: int, seconds: float) -> dict[str, Any]:
    service = build_service([root], store_url=f"sqlite:///{root.parent / 'detente.db'}")
    client = InProcessClient(service)
    client.register_document("repo", "DECISIONS.md", "append_only")
    base = _git(root, "rev-parse", "HEAD")
    claims = [
        client.open_claim(
            {
                "repo": "repo",
                "objective": f"writer {i}",
                "baseCommit": base,
                "paths": [f"w{i}/**"],
                "leaseTtlSeconds": 3600,
                "memoryImpacts": [{"path": "DECISIONS.md"}],
            }
        )["claim"]
        for i in range(writers)
    ]
    start_commits = int(_git(root, "rev-list", "--count", "main"))
    latencies: list[list[float]] = [[] for _ in range(writers)]
    entries: list[list[str]] = [[] for _ in range(writers)]
    errors: list[str] = []
    barrier = threading.Barrier(writers)
    deadline = [0.0]

    def write(i: int) -> None:
        claim = claims[i]
        barrier.wait()
        n = 0
        while time.perf_counter() < deadline[0]:
            entry = f"- writer {i} decision {n}"
            began = time.perf_counter()
            try:
                client.append_entry(
                    {
                        "repo": "repo",
                        "path": "DECISIONS.md",
                        "claimId": claim["id"],
                        "fencingToken": claim["fencingToken"],
                        "entry": entry,
                    }
                )
            except Exception as exc:  # reported, never hidden
                errors.append(f"writer {i}: {exc}")
                return
            latencies[i].append(time.perf_counter() - began)
            entries[i].append(entry)
            n += 1

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    deadline[0] = time.perf_counter() + seconds + 0.05
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    # Under load the checkout follows off the command path: wait for it before checking.
    followed = service.memory.branch.settle("repo", timeout=60)
    commits = int(_git(root, "rev-list", "--count", "main")) - start_commits
    on_main = _git(root, "show", "main:DECISIONS.md").splitlines()
    acked = [e for mine in entries for e in mine]
    missing = [e for e in acked if on_main.count(e) != 1]
    service.store.close()
    every = [x for mine in latencies for x in mine]
    return {
        "appends": len(acked),
        "rate": len(acked) / elapsed,
        "p50": _percentile(every, 0.5) * 1000,
        "p99": _percentile(every, 0.99) * 1000,
        "commits": commits,
        "missing": len(missing),
        "errors": errors,
        "checkout_clean": followed and _git(root, "status", "--porcelain") == "",
        "follows": service.memory.branch.follower.follows,
    }


def _git_commit_loop(root: Path, seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    path = root / "DECISIONS.md"
    deadline = time.perf_counter() + seconds
    began = time.perf_counter()
    n = 0
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        with path.open("a") as out:
            out.write(f"- git commit decision {n}\n")
        subprocess.run(["git", "commit", "-q", "-a", "-m", f"decision {n}"], cwd=root, check=True)
        latencies.append(time.perf_counter() - start)
        n += 1
    elapsed = time.perf_counter() - began
    return {
        "appends": n,
        "rate": n / elapsed,
        "p50": statistics.median(latencies) * 1000,
        "p99": _percentile(latencies, 0.99) * 1000,
        "commits": n,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--writers", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="detente-bench-memory-") as tmp:
        ours = _detente(_repo(Path(tmp) / "repo"), args.writers, args.seconds)
        baseline = _git_commit_loop(_repo(Path(tmp) / "baseline"), args.seconds)
    load = os.getloadavg()[0]
    print(f"# memory appends on the branch: {args.writers} writers, {args.seconds:.0f} s, SQLite")
    print(f"(load average {load:.2f}, {os.cpu_count()} CPUs)\n")
    print("| writer | appends | appends/s | p50 ms | p99 ms | git commits | appends/commit |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, row in ((f"detente, {args.writers} writers", ours), ("git commit loop", baseline)):
        per = row["appends"] / row["commits"] if row["commits"] else 0.0
        print(
            f"| {name} | {row['appends']} | {row['rate']:.1f} | {row['p50']:.1f} | "
            f"{row['p99']:.1f} | {row['commits']} | {per:.2f} |"
        )
    print(f"\nratio appends/s detente / git commit loop: {ours['rate'] / baseline['rate']:.2f}")
    print(
        f"every acknowledged append on main exactly once: {ours['missing'] == 0} "
        f"(missing {ours['missing']}); main's checkout clean: {ours['checkout_clean']} "
        f"(followed {ours['follows']} times)"
    )
    if ours["errors"]:
        print("errors:", *ours["errors"][:5], sep="\n  ")
        return 1
    return 0 if ours["missing"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
