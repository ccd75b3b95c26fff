"""Exact sets of code points, the labels of the pattern automata.

A :class:`CharSet` is a sorted tuple of disjoint, non-adjacent inclusive intervals over the
whole Unicode range, so character classes, their negations and ``*`` are represented
exactly rather than sampled. :data:`PATH_CHARS` and :data:`SEGMENT_CHARS` are the
characters a path and one of its segments may hold (see
:mod:`~detente.domain.overlap.globs` for the semantics).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Final

__all__ = ["PATH_CHARS", "SEGMENT_CHARS", "SLASH", "CharSet"]

_MAX_CODE_POINT: Final = 0x10FFFF


class CharSet:
    """An exact set of code points: sorted, disjoint, non-adjacent inclusive intervals."""

    __slots__ = ("_los", "ranges")

    def __init__(self, ranges: Iterable[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(ranges):
            if merged and lo <= merged[-1][1] + 1:
                if hi > merged[-1][1]:
                    merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        self.ranges: tuple[tuple[int, int], ...] = tuple(merged)
        self._los: tuple[int, ...] = tuple(lo for lo, _ in merged)

    def __contains__(self, ch: object) -> bool:
        if not isinstance(ch, str) or len(ch) != 1:
            return False
        cp = ord(ch)
        i = bisect.bisect_right(self._los, cp) - 1
        return i >= 0 and cp <= self.ranges[i][1]

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharSet) and self.ranges == other.ranges

    def __hash__(self) -> int:
        return hash(self.ranges)

    def __repr__(self) -> str:
        return f"CharSet({list(self.ranges)!r})"

    def __or__(self, other: CharSet) -> CharSet:
        return CharSet(self.ranges + other.ranges)

    def __and__(self, other: CharSet) -> CharSet:
        out: list[tuple[int, int]] = []
        i = j = 0
        a, b = self.ranges, other.ranges
        while i < len(a) and j < len(b):
            lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
            if lo <= hi:
                out.append((lo, hi))
            if a[i][1] < b[j][1]:
                i += 1
            else:
                j += 1
        return CharSet(out)

    def __sub__(self, other: CharSet) -> CharSet:
        return self & other.complement()

    def complement(self) -> CharSet:
        """Every code point not in this set (over the whole Unicode range)."""
        out: list[tuple[int, int]] = []
        nxt = 0
        for lo, hi in self.ranges:
            if lo > nxt:
                out.append((nxt, lo - 1))
            nxt = hi + 1
        if nxt <= _MAX_CODE_POINT:
            out.append((nxt, _MAX_CODE_POINT))
        return CharSet(out)

    @classmethod
    def of(cls, ch: str) -> CharSet:
        """The set holding the single character ``ch``."""
        return cls([(ord(ch), ord(ch))])


PATH_CHARS: Final = CharSet([(0x20, 0x7E), (0xA0, 0xD7FF), (0xE000, _MAX_CODE_POINT)])
"""Characters a path may contain: no control characters (Cc), no surrogates."""
SLASH: Final = CharSet.of("/")
SEGMENT_CHARS: Final = PATH_CHARS - SLASH
"""Characters a segment may contain: what ``?`` and ``*`` range over."""
