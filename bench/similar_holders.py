"""Benchmark: what a new claim's objective resembles among N holders, index against brute force.

Claim open stores the 10 holders whose objective is most similar to the new one (at or
above the calibrated threshold). This times that record two ways, in-process, on the same
holders and objectives (real ansible commit subjects, ``../shared/data``; suffixed with a
number past the 2,996 subjects):

- **index**: :class:`detente.index.nearest.NearestTexts` (one matrix-vector product in the
  semantic mode, an inverted index of term counts in the lexical one) and its top-k;
- **brute force** (the same-run baseline): :func:`detente.service.search.semantic_record`,
  which compares the objective with every holder's text.

Every objective is embedded before timing (a server embeds each holder once, then one
text per opening: the new objective, whose cost is the same either way). Reported: median
and p99 process CPU per record (``time.process_time``: a loaded machine stretches wall
time, not CPU), the ratio, and whether both records were equal for every objective.

Usage: ``python bench/similar_holders.py [--sizes 200,3000,10000] [--queries 100]
[--modes lexical,semantic]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from detente.index.nearest import NearestTexts
from detente.index.semantic import Similarity
from detente.service.search import MAX_SIMILAR, semantic_record, similar_record


def _subjects() -> list[str]:
    for parent in Path(__file__).resolve().parents:
        data = parent / "shared" / "data" / "ansible-commits.jsonl"
        if data.is_file():
            lines = data.read_text(encoding="utf-8").splitlines()
            return [str(json.loads(line)["subject"]) for line in lines]
    raise SystemExit("../shared/data/ansible-commits.jsonl not found")


def _texts(subjects: list[str], count: int, offset: int) -> list[str]:
    out = []
    for i in range(count):
        j = offset + i
        base = subjects[j % len(subjects)]
        out.append(base if j < len(subjects) else f"{base} ({j // len(subjects)})")
    return out


def _p(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _compare(
    sim: Similarity, nearest: NearestTexts, candidates: list[tuple[str, str]], queries: list[str]
) -> tuple[list[float], list[float], bool]:
    """CPU ms per record by the index and by brute force, and whether they always agree."""
    fast: list[float] = []
    brute: list[float] = []
    same = True
    for query in queries:
        start = time.process_time()
        got = similar_record(sim, nearest.top(query, MAX_SIMILAR, sim.threshold))
        fast.append((time.process_time() - start) * 1000)
        start = time.process_time()
        expected = semantic_record(sim, query, candidates)
        brute.append((time.process_time() - start) * 1000)
        same = same and got == expected
    return fast, brute, same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,3000,10000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--modes", default="lexical,semantic")
    args = parser.parse_args()
    subjects = _subjects()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"similar-holder record, in-process, process CPU per record (load average {load})\n")
    print(
        "| mode | holders | records | index median ms | index p99 ms "
        "| brute force median ms | brute p99 ms | brute/index | same records |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for mode in args.modes.split(","):
        sim = Similarity("lexical" if mode == "lexical" else None)
        if sim.mode != mode:
            print(f"| {mode} | - | - | unavailable: {sim.fallback_reason} |||||")
            continue
        for size in [int(s) for s in args.sizes.split(",")]:
            holders = {f"clm_{i:06d}": t for i, t in enumerate(_texts(subjects, size, 0))}
            queries = _texts(subjects, args.queries, size)
            if mode == "semantic":
                started = time.monotonic()
                sim.embed([*holders.values(), *queries])
                print(f"  embedded {size} in {time.monotonic() - started:.0f} s", file=sys.stderr)
            nearest = NearestTexts(sim)
            nearest.update(holders.items(), [])
            candidates = sorted(holders.items())
            fast, brute, same = _compare(sim, nearest, candidates, queries)
            f50, f99 = _p(fast)
            b50, b99 = _p(brute)
            print(
                f"| {mode} | {size:,} | {len(queries)} | {f50:.3f} | {f99:.3f} | {b50:.2f} "
                f"| {b99:.2f} | {b50 / max(f50, 1e-6):.0f}x | {'yes' if same else 'NO'} |",
                flush=True,
            )
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"\nload average after the run: {load}")


if __name__ == "__main__":
    main()
