"""Benchmark: latency of "open one more claim" against N live claims.

Live claims take their path patterns from the real file list of ansible
(``../shared/data/ansible-paths.txt``): about 60% exact paths, 25% ``dir/**``, 14%
``dir/*.ext`` or ``dir/**/*.ext`` and 1% root-level ``**/*.ext``; each claim holds 1 to 3
patterns. A query is a new claim (1 to 3 patterns from the same mix) asking for every
overlapping live claim, answered by :class:`PatternIndex` and by a brute-force pairwise
``intersect`` scan over pre-compiled patterns, in the same run. Both answers are checked
to be equal.

Usage: ``python bench/overlap.py [--sizes 100,1000,10000] [--queries 200] [--seed 1]``
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from detente.domain.overlap import (
    CompiledPattern,
    PatternIndex,
    compile_pattern,
    intersect_compiled,
)

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ansible-paths.txt"
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
    start = time.perf_counter_ns()
    result = fn()
    return time.perf_counter_ns() - start, result


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="comma-separated N")
    parser.add_argument("--queries", type=int, default=200, help="queries per size")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
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
    rows = [run_size(paths, size, args.queries, args.seed) for size in sizes]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(" | ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    print("-|-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
