"""Benchmark: a shared resource's heartbeat and counter against a claim's heartbeat.

Every command (and every read) scans the shared resources' grants for a due deadline
before it runs (``ServiceCore._due``/``timeouts``), and a renewal folds into a resource
record holding every grant of that resource. This bench checks that neither grows into
the cost of a command as grants pile up: a service on a SQLite file (the embedded
default) holds ``size`` live grants, spread over resources of 10 slots each, plus one
claim; then, in alternating rounds, it renews one resource grant, renews the claim's
lease (the baseline: the heartbeat agents already send), and takes a number from a
counter. Reported: p50 and p90 in milliseconds per size, and the ratio of the resource
renewal to the claim renewal measured in the same run.

Usage: ``python bench/resources.py [--rounds 200] [--sizes 10,100,1000]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from detente.clock import FakeClock
from detente.domain.claims.commands import OpenClaim, RenewLease
from detente.domain.claims.model import Agent
from detente.domain.resources.commands import Acquire, NextNumber, Renew
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

SLOTS = 10
TTL = 3600


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _measure(size: int, rounds: int) -> tuple[list[float], list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "detente.db")
        service = Service(store, FakeClock(), [RepoConfig("demo")])
        try:
            for i in range(size):
                name = f"res{i // SLOTS}"
                service.resources.acquire(Acquire("demo", name, f"agent{i}", TTL, capacity=SLOTS))
            held = service.resources.acquire(Acquire("demo", "bench", "me", TTL, capacity=1))
            token = held.fencing_token or 0
            claim = service.claims.open_claim(
                OpenClaim(
                    repo="demo",
                    objective="bench baseline",
                    base_commit="a" * 40,
                    agent=Agent(id="me", name="me"),
                    lease_ttl_seconds=TTL,
                    paths=("src/**",),
                )
            ).claim
            lease, revision = claim.lease.revision, claim.revision
            renew_resource: list[float] = []
            renew_claim: list[float] = []
            numbers: list[float] = []
            for n in range(rounds):
                renew_resource.append(
                    _timed(
                        lambda n=n: service.resources.renew(
                            Renew("demo", "bench", token, n + 1, TTL)
                        )
                    )
                )
                cmd = RenewLease(claim.id, lease, revision, TTL)
                renew_claim.append(_timed(partial(service.claims.renew, cmd)))
                lease, revision = lease + 1, revision + 1
                numbers.append(
                    _timed(lambda: service.resources.next_number(NextNumber("demo", "migrations")))
                )
            return renew_resource, renew_claim, numbers
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--sizes", default="10,100,1000")
    args = parser.parse_args()
    print(
        f"resource heartbeat vs claim heartbeat, SQLite, {args.rounds} rounds per size "
        f"(resources of {SLOTS} slots; ms)\n"
    )
    print(
        "| live grants | resource renew p50 | p90 | claim renew p50 (baseline) | p90 "
        "| ratio p50 | next number p50 |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        res, base, nums = _measure(size, args.rounds)
        print(
            f"| {size:,} | {statistics.median(res):.2f} | {_p(res, 0.9):.2f} "
            f"| {statistics.median(base):.2f} | {_p(base, 0.9):.2f} "
            f"| {statistics.median(res) / statistics.median(base):.2f} "
            f"| {statistics.median(nums):.2f} |"
        )


if __name__ == "__main__":
    main()
