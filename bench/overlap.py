"""Benchmark: latency of "open one more claim" against N live claims.

Live claims take their path patterns from the real file list of ansible
(``../shared/data/ansible-paths.txt``): about 60% exact paths, 25% ``dir/**``, 14%
``dir/*.ext`` or ``dir/**/*.ext`` and 1% root-level ``**/*.ext``; each claim holds 1 to 3
patterns. A query is a new claim (1 to 3 patterns from the same mix) asking for every
overlapping live claim, answered by :class:`PatternIndex` and by a brute-force pairwise
``intersect`` scan over pre-compiled patterns, in the same run. Both answers are checked
to be equal.

A second table measures the whole use case, ``Service.claims.open_claim`` on the in-memory
store (validation, overlap analysis inside the command transaction, event append with
expected revisions, projection, the response's overlap report), with N live claims
opened beforehand; the baseline is the same service whose pattern index is swapped, in
the same run, for a brute-force list that scans every live pattern. Every claim of this
table is an advisory lease: with this mix a new claim meets hundreds of live ones, and
blocking claims would each start a negotiation whose settlement re-examines every
participant (that cost is the negotiation's, not the overlap query's). Seeding N claims
through the use case costs N opens, so its default sizes stop at 1,000 (the whole bench
then finishes in about a minute on 2 cores); ``--service-sizes 10000`` takes longer.

Progress goes to stderr. ``--clock cpu`` times with this process's CPU clock instead of
the wall clock (on a shared, loaded machine the scheduler stretches wall times).

Usage: ``python bench/overlap.py [--sizes 100,1000,10000] [--service-sizes 100,1000]
[--queries 200] [--seed 1] [--clock wall|cpu]``
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from detente.domain.overlap import (
    Budget,
    CompiledPattern,
    PatternIndex,
    compile_pattern,
    intersect_compiled,
)


def _data_file(name: str) -> Path:
    """``shared/data/<name>`` beside the checkout (the main one or any worktree of it)."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / name
        if candidate.is_file():
            return candidate
    return Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / name


DATA = _data_file("ansible-paths.txt")
#: The clock of every timing: wall time, or with ``--clock cpu`` this process's CPU time
#: (robust on a shared machine, where a loaded scheduler stretches wall time).
CLOCK: list[Callable[[], int]] = [time.perf_counter_ns]
BRUTE_BUDGET_NS = 15 * 10**9  # per size: stop brute-force queries after ~15 s

Claim = tuple[str, list[str]]
Found = set[tuple[str, str, str]]


class PatternMaker:
    """Seeded claim patterns drawn from real paths."""

    def __init__(self, paths: list[str], rng: random.Random) -> None:
        self.paths = paths
        self.rng = rng
        self.nested = [p for p in paths if "/" in p]
        self.with_ext = [p for p in paths if "/" in p and "." in p.rsplit("/", 1)[1]]
        self.exts = sorted({p.rsplit(".", 1)[1] for p in self.with_ext})

    def directory(self, path: str) -> str:
        parts = path.split("/")[:-1]
        if len(parts) > 2 and self.rng.random() < 0.2:
            parts = parts[:-1]  # sometimes a broader directory
        return "/".join(parts)

    def pattern(self) -> str:
        roll = self.rng.random()
        if roll < 0.60:
            return self.rng.choice(self.paths)
        if roll < 0.85:
            return self.directory(self.rng.choice(self.nested)) + "/**"
        if roll < 0.99:
            path = self.rng.choice(self.with_ext)
            ext = path.rsplit(".", 1)[1]
            glue = "/*." if self.rng.random() < 0.8 else "/**/*."
            return self.directory(path) + glue + ext
        return "**/*." + self.rng.choice(self.exts)

    def claim(self, key: str) -> Claim:
        count = self.rng.choices((1, 2, 3), weights=(60, 30, 10))[0]
        return key, [compile_pattern(self.pattern()).pattern for _ in range(count)]


def via_index(index: PatternIndex, query: Claim) -> Found:
    found: Found = set()
    for pattern in query[1]:
        for key, theirs, witness in index.overlapping(pattern, exclude=query[0]):
            found.add((key, theirs, witness))
    return found


def via_brute(live: list[tuple[str, CompiledPattern]], query: Claim) -> Found:
    found: Found = set()
    for pattern in query[1]:
        mine = compile_pattern(pattern)
        for key, theirs in live:
            if key == query[0]:
                continue
            witness = intersect_compiled(mine, theirs)
            if witness is not None:
                found.add((key, theirs.pattern, witness))
    return found


def timed(fn: Callable[[], Found]) -> tuple[int, Found]:
    start = CLOCK[0]()
    result = fn()
    return CLOCK[0]() - start, result


def p99(samples: list[int]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def run_size(paths: list[str], size: int, queries: int, seed: int) -> tuple[str, ...]:
    maker = PatternMaker(paths, random.Random(seed * 1_000_003 + size))
    claims = [maker.claim(f"claim-{n:05d}") for n in range(size)]
    index = PatternIndex()
    live: list[tuple[str, CompiledPattern]] = []
    for key, patterns in claims:
        for pattern in patterns:
            index.add(key, pattern)
            live.append((key, compile_pattern(pattern)))
    asks = [maker.claim("new-claim") for _ in range(queries)]
    print(f"N={size}: {len(index)} live patterns, {queries} queries", file=sys.stderr)

    # Each query runs both ways, alternating which goes first, each on a freshly compiled
    # query (a new claim's patterns are new); live patterns stay compiled in both.
    index_ns: list[int] = []
    brute_ns: list[int] = []
    answers: list[Found] = []
    for n, query in enumerate(asks):
        run_brute = sum(brute_ns) <= BRUTE_BUDGET_NS or len(brute_ns) < 20
        found: dict[str, Found] = {}
        for method in ("index", "brute") if n % 2 == 0 else ("brute", "index"):
            compile_pattern.cache_clear()
            if method == "index":
                elapsed, found[method] = timed(functools.partial(via_index, index, query))
                index_ns.append(elapsed)
            elif run_brute:
                elapsed, found[method] = timed(functools.partial(via_brute, live, query))
                brute_ns.append(elapsed)
        if found.get("brute", found["index"]) != found["index"]:
            raise SystemExit(f"index and brute force disagree for {query}")
        answers.append(found["index"])
        if n % 50 == 49:
            print(f"N={size}: {n + 1} queries done", file=sys.stderr)
    print(f"N={size}: brute force ran {len(brute_ns)} queries", file=sys.stderr)

    index_median = statistics.median(index_ns) / 1000
    brute_median = statistics.median(brute_ns) / 1000
    throughput = len(index_ns) / (sum(index_ns) / 1e9)
    mean_found = statistics.mean(len(a) for a in answers)
    return (
        f"{size}",
        f"{len(index)}",
        f"{mean_found:.1f}",
        f"{index_median:.1f}",
        f"{p99(index_ns) / 1000:.1f}",
        f"{throughput:,.0f}",
        f"{brute_median:.1f}",
        f"{p99(brute_ns) / 1000:.1f}",
        f"{len(brute_ns)}",
        f"{brute_median / index_median:.1f}x",
    )


class BruteIndex:
    """The baseline: every live pattern in a list, every query a full pairwise scan."""

    def __init__(self, entries: list[tuple[str, str]]) -> None:
        self.entries = [(key, pattern, compile_pattern(pattern)) for key, pattern in entries]

    def add(self, key: str, pattern: str, carve_outs: Sequence[str] = ()) -> None:
        self.entries.append((key, pattern, compile_pattern(pattern)))

    def remove_key(self, key: str) -> int:
        before = len(self.entries)
        self.entries = [e for e in self.entries if e[0] != key]
        return before - len(self.entries)

    def overlapping(
        self,
        pattern: str,
        *,
        exclude: str | None = None,
        budget: Budget | None = None,
        carve_outs: Sequence[str] = (),  # none in this bench (PatternIndex's signature)
    ) -> list[tuple[str, str, str]]:
        query = compile_pattern(pattern)
        out = []
        for key, theirs, compiled in self.entries:
            if key != exclude:
                witness = intersect_compiled(query, compiled, budget=budget)
                if witness is not None:
                    out.append((key, theirs, witness))
        return sorted(out)


def run_service(paths: list[str], size: int, queries: int, seed: int) -> tuple[str, ...]:
    """Median/p99 of ``Service.claims.open_claim`` with ``size`` live claims: index vs scan."""
    from detente.clock import FakeClock
    from detente.domain.claims.commands import OpenClaim
    from detente.domain.claims.model import Agent
    from detente.service import RepoConfig, Service
    from detente.storage.memory import MemoryStore

    maker = PatternMaker(paths, random.Random(seed * 7_000_003 + size))
    service = Service(MemoryStore(), FakeClock(), [RepoConfig("bench")])

    def seed_of(n: int, patterns: list[str]) -> OpenClaim:
        return OpenClaim(
            repo="bench",
            objective=f"work {n}",
            base_commit="a" * 40,
            agent=Agent(f"agent-{n % 50}", f"agent-{n % 50}"),
            lease_ttl_seconds=86_400,
            paths=tuple(patterns),
            advisory=True,
        )

    started = time.monotonic()
    for n in range(size):
        service.claims.open_claim(seed_of(n, maker.claim(f"c{n}")[1]))
        if n % 500 == 499:
            spent = time.monotonic() - started
            print(f"service N={size}: {n + 1} claims opened ({spent:.0f} s)", file=sys.stderr)
    state = service.fresh("bench")  # the bench swaps the index in place
    real_index = state.claims.path_index
    entries = list(real_index)
    timings: dict[str, list[int]] = {"index": [], "scan": []}
    for n in range(queries):
        for method in ("index", "scan") if n % 2 == 0 else ("scan", "index"):
            state.claims.path_index = real_index if method == "index" else BruteIndex(entries)  # type: ignore[assignment]
            cmd = seed_of(size + n, maker.claim("q")[1])
            compile_pattern.cache_clear()
            start = CLOCK[0]()
            view = service.claims.open_claim(cmd)
            timings[method].append(CLOCK[0]() - start)
            entries += [(view.claim.id, p) for p in view.claim.paths]
            if method == "scan":
                for p in view.claim.paths:
                    real_index.add(view.claim.id, p)
    state.claims.path_index = real_index
    idx, scan = timings["index"], timings["scan"]
    return (
        f"{size}",
        f"{statistics.median(idx) / 1000:.0f}",
        f"{p99(idx) / 1000:.0f}",
        f"{len(idx) / (sum(idx) / 1e9):,.0f}",
        f"{statistics.median(scan) / 1000:.0f}",
        f"{p99(scan) / 1000:.0f}",
        f"{statistics.median(scan) / statistics.median(idx):.1f}x",
    )


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(" | ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="comma-separated N")
    parser.add_argument(
        "--service-sizes", default="100,1000", help="N of the use-case table ('' skips it)"
    )
    parser.add_argument("--queries", type=int, default=200, help="queries per size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--clock", choices=("wall", "cpu"), default="wall", help="what the timings measure"
    )
    args = parser.parse_args(argv)
    if args.clock == "cpu":
        CLOCK[0] = time.process_time_ns
    if not DATA.is_file():
        raise SystemExit(f"missing data file {DATA}")
    paths = [line for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    header = (
        "N claims",
        "patterns",
        "hits/query",
        "index median us",
        "index p99 us",
        "index ops/s",
        "brute median us",
        "brute p99 us",
        "brute n",
        "brute/index",
    )
    load = os.getloadavg()[0]
    print(f"Timings: {args.clock} clock; load average {load:.1f} on {os.cpu_count()} cores")
    print("Overlap query: which live claims does a new 1-3 pattern claim meet?")
    table(header, [run_size(paths, size, args.queries, args.seed) for size in sizes])
    print()
    print("Service.claims.open_claim end to end (memory store): pattern index vs full scan")
    service_header = (
        "N claims",
        "index median us",
        "index p99 us",
        "index opens/s",
        "scan median us",
        "scan p99 us",
        "scan/index",
    )
    service_sizes = [int(s) for s in args.service_sizes.split(",") if s.strip()]
    if service_sizes:
        rows = [
            run_service(paths, size, min(args.queries, 100), args.seed) for size in service_sizes
        ]
        table(service_header, rows)


if __name__ == "__main__":
    main()
