"""Which definitions a range of changed lines touches: :func:`innermost`.

Its own module (not :mod:`detente.index.diff`): a harness hook judging one edit needs it,
and none of the diff machinery, the symbol index or the overlap globs ``diff`` imports.
"""

from __future__ import annotations

from collections.abc import Iterable

from detente.index.extract import Symbol

__all__ = ["innermost"]


def innermost(symbols: Iterable[Symbol], start: int, count: int) -> tuple[set[str], bool]:
    """Innermost symbols touched by lines ``start .. start+count-1``, and whether some of
    those lines lie outside every symbol.

    A symbol is innermost-touched when some line of the range inside it is not inside one
    of its nested symbols.
    """
    listed = list(symbols)
    end = start + count - 1
    names: set[str] = set()
    for symbol in listed:
        lo, hi = max(start, symbol.start_line), min(end, symbol.end_line)
        if lo > hi:
            continue
        nested = [
            (s.start_line, s.end_line)
            for s in listed
            if s is not symbol
            and symbol.start_byte <= s.start_byte
            and s.end_byte <= symbol.end_byte
            and (s.start_byte, -s.end_byte) != (symbol.start_byte, -symbol.end_byte)
        ]
        if not _covers(nested, lo, hi):
            names.add(symbol.name)
    outside = not _covers([(s.start_line, s.end_line) for s in listed], start, end)
    return names, outside


def _covers(intervals: list[tuple[int, int]], lo: int, hi: int) -> bool:
    """Whether the union of inclusive line intervals covers ``lo .. hi``."""
    at = lo
    for a, b in sorted(intervals):
        if a > at:
            return False
        at = max(at, b + 1)
        if at > hi:
            return True
    return at > hi
