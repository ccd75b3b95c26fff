"""Benchmark: the budgeted glob intersection on adversarial shapes, against no budget.

Two shapes from issue #13, grown until the budget matters:

* ``x*a*a...*`` against ``x*b*b...*`` (``n`` stars each): the product of two "star
  chains"; the cheapest common word has ``2n`` letters;
* ``*a?...?`` against ``*b?...?`` (``k`` ``?`` each): disjoint, but proving it needs
  every subset of the last ``k`` positions (exponential).

For each size, the same-run baseline is the same search with an unlimited budget (skipped
once it would take too long: ``--max-baseline-s``). Columns: time of the default budgeted
search, its outcome (a witness, ``disjoint`` or ``undecided``), the unlimited search's time
and outcome, and their ratio.

Usage: ``python bench/overlap_budget.py [--max-baseline-s 20]``
"""

from __future__ import annotations

import argparse
import time

from detente.domain.overlap import Budget, Undecided, compile_pattern, intersect


def _run(a: str, b: str, budget: Budget) -> tuple[float, str]:
    compile_pattern.cache_clear()
    start = time.perf_counter()
    try:
        found = intersect(a, b, budget=budget)
        outcome = "disjoint" if found is None else f"witness ({len(found)} chars)"
    except Undecided:
        outcome = "undecided"
    return time.perf_counter() - start, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-baseline-s", type=float, default=20.0)
    args = parser.parse_args()
    shapes = [
        ("star chains", n, "x" + "*a" * n + "*", "x" + "*b" * n + "*") for n in (4, 8, 12, 15)
    ] + [("a/b k from the end", k, "*a" + "?" * k, "*b" + "?" * k) for k in (4, 8, 10, 12, 16, 30)]
    print(
        f"{'shape':<20} {'size':>4} {'budgeted ms':>12} {'outcome':<20} "
        f"{'unlimited ms':>13} {'outcome':<20} {'ratio':>7}"
    )
    slow: set[str] = set()  # shapes whose unlimited search passed --max-baseline-s
    for name, size, a, b in shapes:
        spent, outcome = _run(a, b, Budget())
        if name in slow:
            base = f"{'(skipped)':>13} {'':<20} {'':>7}"
        else:
            base_spent, base_outcome = _run(a, b, Budget(total=1 << 62, per_search=1 << 62))
            if base_spent > args.max_baseline_s:
                slow.add(name)
            base = f"{base_spent * 1000:>13.1f} {base_outcome:<20} {base_spent / spent:>7.1f}"
        print(f"{name:<20} {size:>4} {spent * 1000:>12.1f} {outcome:<20} {base}")


if __name__ == "__main__":
    main()
