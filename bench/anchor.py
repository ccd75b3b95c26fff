"""Benchmark: what anchoring the log costs (signed checkpoints in git, the audit's check).

Two tables, each against a baseline measured in the same run:

- **checkpoint write**: one signed checkpoint appended to ``refs/detente/checkpoints``
  (``hash-object``, ``mktree``, ``commit-tree``, ``update-ref``) against one bare
  ``git update-ref`` (the cheapest git process), median of ``--writes`` writes, over a
  chain already ``--chain`` long;
- **audit verify**: ``Service.audit()`` on a real SQLite file of N events with the anchor
  (checkpoints every 100 events, the default branch's landings) against the same audit
  without it (chain, projections and invariants only), median of ``--repeat`` runs.

Usage: ``python bench/anchor.py [--events 1000,5000] [--writes 15] [--repeat 3]``.
Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
os.environ.setdefault("DETENTE_SIMILARITY", "lexical")

from detente.clock import FakeClock
from detente.domain.claims.commands import RenewLease
from detente.service import RepoConfig, Service
from detente.service.anchor import CHECKPOINT_REF, Anchor
from detente.storage.sqlite import SqliteStore
from detente.vcs.record_ref import read_records

from support import seed


def _repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@x",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@x",
    }
    for args in (("init", "-q", "-b", "main"), ("commit", "-q", "--allow-empty", "-m", "m0")):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)
    return repo


def _ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_writes(root: Path, writes: int, chain: int) -> None:
    repo = _repo(root)
    anchor = Anchor(repo, root / "anchor.key", "sqlite:///bench")
    anchor.start()
    for n in range(chain):
        anchor.write(n, "0" * 64, n, "2026-12-01T00:00:00Z")
    timed: list[float] = []
    base: list[float] = []
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    for n in range(writes):
        start = time.perf_counter()
        anchor.write(chain + n, "0" * 64, n, "2026-12-01T00:00:00Z")
        timed.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run(["git", "update-ref", "refs/bench/base", head], cwd=repo, check=True)
        base.append(time.perf_counter() - start)
    assert len(read_records(repo, CHECKPOINT_REF)) == chain + writes
    print("| what | chain length | writes | median ms | baseline (update-ref) ms | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    print(
        f"| signed checkpoint write | {chain} | {writes} | {_ms(timed):.1f} | "
        f"{_ms(base):.1f} | {_ms(timed) / _ms(base):.1f}x |"
    )


def _log(root: Path, events: int) -> tuple[Path, Path]:
    repo, db = _repo(root), root / "d.db"
    service = Service(SqliteStore(db), FakeClock(), [RepoConfig("demo", path=repo)])
    service.anchor = Anchor(repo, root / "anchor.key", f"sqlite:///{db}")
    service.start_anchor()
    claim = service.claims.open_claim(seed("a.py", ttl=3600)).claim
    while service.head() < events:
        claim = service.claims.renew(
            RenewLease(claim.id, claim.lease.revision, claim.revision, 3600)
        ).claim
        if service.head() % 100 == 0:
            service.stop_anchor()  # the periodic checkpoint, synchronously here
    service.stop_anchor()
    service.store.close()
    return repo, db


def bench_audit(root: Path, sizes: list[int], repeat: int) -> None:
    print("| events | audit ms (anchored) | audit ms (chain only) | ratio |")
    print("|---:|---:|---:|---:|")
    for n in sizes:
        where = root / f"log-{n}"
        where.mkdir()
        repo, db = _log(where, n)
        anchored: list[float] = []
        plain: list[float] = []
        for _ in range(repeat):
            for anchor in (True, False):
                service = Service(SqliteStore(db), FakeClock(), [RepoConfig("demo", path=repo)])
                if anchor:
                    service.anchor = Anchor(repo, where / "anchor.key", f"sqlite:///{db}")
                start = time.perf_counter()
                report = service.audit()
                (anchored if anchor else plain).append(time.perf_counter() - start)
                service.store.close()
                assert report.ok, report
        a, p = _ms(anchored), _ms(plain)
        print(f"| {n} | {a:.0f} | {p:.0f} | {a / p:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="1000,5000")
    parser.add_argument("--writes", type=int, default=15)
    parser.add_argument("--chain", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "w").mkdir()
        bench_writes(root / "w", args.writes, args.chain)
        print()
        bench_audit(root, [int(n) for n in args.events.split(",")], args.repeat)


if __name__ == "__main__":
    main()
