"""Benchmark: overlap queries against carved patterns, against the same patterns uncarved.

A split leaves a claim's glob with the other claims' targets carved out (``dir/**`` minus
some of its files). Every overlap query that meets such a glob searches for a witness
outside the carve-outs. This measures that cost on ansible's real file tree
(``../shared/data/ansible-paths.txt``): every directory with at least ``--min-files`` files
becomes one holder's ``dir/**``; the carved index cuts ``c`` of the directory's files out
of it (``c`` per row), the same-run baseline holds the same globs uncarved. Each query is
one claim opening on ``dir/*.py`` and on one file of the directory that is not carved out.
Times are process CPU seconds (``time.process_time``: a loaded machine stretches wall
time, not this), per query.

Usage: ``python bench/carveouts.py [--min-files 10] [--data PATHS_FILE]``
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from detente.domain.overlap.globs import compile_pattern
from detente.domain.overlap.index import PatternIndex

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ansible-paths.txt"


def _dirs(data: Path, min_files: int) -> dict[str, list[str]]:
    files: dict[str, list[str]] = defaultdict(list)
    for line in data.read_text(encoding="utf-8").splitlines():
        if "/" in line and line.endswith(".py"):
            files[line.rsplit("/", 1)[0]].append(line)
    return {d: sorted(f) for d, f in sorted(files.items()) if len(f) >= min_files}


def _query_time(index: PatternIndex, queries: list[str]) -> tuple[float, int]:
    compile_pattern.cache_clear()
    start = time.process_time()
    found = sum(len(index.overlapping(q)) for q in queries)
    return (time.process_time() - start) / len(queries), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--min-files", type=int, default=10)
    parser.add_argument("--data", type=Path, default=DATA, help="a file of repo paths")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"missing data file {args.data}")
    dirs = _dirs(args.data, args.min_files)
    print(f"{len(dirs)} directories with >= {args.min_files} .py files, one holder each")
    print(f"{'carve-outs':>10} {'queries':>8} {'carved µs':>10} {'plain µs':>9} {'ratio':>6}")
    for cuts in (1, 5, 20, 100):
        carved, plain = PatternIndex(), PatternIndex()
        queries: list[str] = []
        for i, (d, files) in enumerate(dirs.items()):
            carved.add(f"clm_{i}", f"{d}/**", files[: min(cuts, len(files) - 1)])
            plain.add(f"clm_{i}", f"{d}/**")
            queries += [f"{d}/*.py", files[-1]]
        carved_s, carved_found = _query_time(carved, queries)
        plain_s, plain_found = _query_time(plain, queries)
        assert carved_found == plain_found  # every query meets its holder outside the cuts
        print(
            f"{cuts:>10} {len(queries):>8} {carved_s * 1e6:>10.1f} {plain_s * 1e6:>9.1f} "
            f"{carved_s / plain_s:>6.1f}"
        )


if __name__ == "__main__":
    main()
