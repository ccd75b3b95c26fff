"""The budgeted witness search over the product of two pattern automata.

:func:`cheapest_common_word` is an A* search over triples (state set of one automaton,
state set of the other, state of a small automaton that keeps the word a valid path),
cost ordered by (segments starting with ``.``, length) with the larger of the two
automata's distances to acceptance as a consistent length estimate; ties go to the
deeper state, so a search that can succeed reaches a goal without sweeping a whole
level of the product first. Each step reads one representative character per
elementary interval of both automata's outgoing labels, so classes and negations are
exact over all of Unicode with a handful of successors.

The work is bounded: every representative tried costs one unit of a :class:`Budget`,
which caps one search (:data:`SEARCH_BUDGET`) and, when shared by the searches of one
request (an overlap analysis), their sum. When it runs out the search raises
:class:`Undecided` (callers treat the pair as overlapping).
A* itself is Hart, Nilsson and Raphael (1968).
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections.abc import Mapping
from typing import Final, Protocol, TypeVar

from detente.domain.overlap.nfa import UNREACHABLE

__all__ = [
    "ANALYSIS_BUDGET",
    "SEARCH_BUDGET",
    "V_NAME",
    "V_START",
    "Automaton",
    "Budget",
    "Undecided",
    "cheapest_common_word",
    "pair_step",
    "pick",
    "spell",
    "valid_step",
]

# Preferred witness characters, best first: readable, lower case (case-folded repos).
_PREFERRED: Final = "xyzabcdefghijklmnopqrstuvw0123456789_-.XYZABCDEFGHIJKLMNOPQRSTUVW/"
_PREFERRED_RANK: Final = {ch: rank for rank, ch in enumerate(_PREFERRED)}
# '.' and '/' are distinguished by the path-validity automaton: keep them alone in
# their elementary intervals.
_FIXED_BOUNDS: Final = (ord("."), ord("/"), ord("/") + 1)

# Path-validity automaton over one segment: at a segment start, after ".", after "..",
# or inside an ordinary segment (the only accepting state, the only one '/' may leave).
V_START, V_DOT, V_DOTDOT, V_NAME = 0, 1, 2, 3

#: Product transitions one intersection search may try before it gives up (see
#: :class:`Undecided`). Pairs drawn from real repositories need under a thousand;
#: ``bench/overlap_budget.py`` measures what a search that spends it all costs (tens of ms).
SEARCH_BUDGET: Final = 20_000
#: Units one overlap analysis (one claim's patterns against every live claim) may spend
#: on searches in total: a few hundred realistic searches, about a second at worst.
ANALYSIS_BUDGET: Final = 10 * SEARCH_BUDGET


class Undecided(Exception):
    """The intersection search ran out of budget before it found a path or proved none.

    Attributes:
        a: one canonical pattern.
        b: the other.
        budget: the number of product transitions the search was allowed to try.
    """

    def __init__(self, a: str, b: str, budget: int) -> None:
        super().__init__(f"overlap of {a!r} and {b!r} undecided within {budget} steps")
        self.a = a
        self.b = b
        self.budget = budget


class Budget:
    """Search work allowed: per search and in total over every search charged to it.

    One budget shared by the searches of one overlap analysis keeps a claim with many
    adversarial patterns from holding its repository for long: once the total is spent,
    every further search that needs work is undecided at once (and blocks), while pairs
    decided without a search (literal paths, prefix and suffix tests) stay exact.

    Attributes:
        total: units allowed over every search charged to this budget.
        per_search: units allowed to one search.
        spent: units spent so far.
    """

    __slots__ = ("per_search", "spent", "total")

    def __init__(self, total: int = SEARCH_BUDGET, per_search: int = SEARCH_BUDGET) -> None:
        self.total = total
        self.per_search = per_search
        self.spent = 0

    def allowance(self) -> int:
        """Units the next search may spend."""
        return max(0, min(self.per_search, self.total - self.spent))

    def __repr__(self) -> str:
        return f"Budget(total={self.total}, per_search={self.per_search}, spent={self.spent})"


class Automaton(Protocol):
    """What the search needs of a compiled pattern (see ``CompiledPattern``)."""

    @property
    def pattern(self) -> str: ...

    @property
    def prefix(self) -> str: ...

    def entry(self) -> tuple[int, int, int]: ...

    def read(self, text: str, mask: int = 1) -> int: ...

    def step(self, mask: int, ch: str) -> int: ...

    def accepts(self, mask: int) -> bool: ...

    def remaining(self, mask: int) -> int: ...

    def bounds(self, mask: int) -> tuple[int, ...]: ...


_State = tuple[int, int, int]
#: A search state (any hashable tuple of automaton states).
S = TypeVar("S", bound=tuple[object, ...])


def cheapest_common_word(a: Automaton, b: Automaton, budget: Budget) -> str | None:
    """A* over (states of a, states of b, validity state); cost (dot-segments, length).

    Every common word starts with the longer of the two literal prefixes (they are
    compatible), so both automata read it first and the search starts after it. The
    length is estimated from below by what each automaton still needs to accept.

    Raises:
        Undecided: the search needed more than ``budget`` allows.
    """
    allowance = budget.allowance()
    word, used = _search(a, b, allowance)
    budget.spent += used
    if used > allowance:
        raise Undecided(a.pattern, b.pattern, allowance)
    return word


def _search(a: Automaton, b: Automaton, allowance: int) -> tuple[str | None, int]:
    """The search itself: (the word or None, units used); stops once past ``allowance``."""
    if len(a.prefix) >= len(b.prefix):
        lead = a.prefix
        mask_a, valid, dots = a.entry()
        mask_b = b.read(lead[len(b.prefix) :], b.entry()[0])
    else:
        lead = b.prefix
        mask_b, valid, dots = b.entry()
        mask_a = a.read(lead[len(a.prefix) :], a.entry()[0])
    if valid < 0 or not mask_a or not mask_b:
        return None, 0
    estimate = max(a.remaining(mask_a), b.remaining(mask_b))
    if estimate >= UNREACHABLE:
        return None, 0
    used = 0
    start: _State = (mask_a, mask_b, valid)
    heap: list[tuple[int, int, int, int, _State, _State | None, str]] = [
        (dots, len(lead) + estimate, -len(lead), 0, start, None, lead)
    ]
    settled: dict[_State, tuple[_State | None, str]] = {}
    counter = 0
    while heap:
        dots, _, depth, _, state, parent, ch = heapq.heappop(heap)
        length = -depth
        if state in settled:
            continue
        settled[state] = (parent, ch)
        mask_a, mask_b, valid = state
        if valid == V_NAME and a.accepts(mask_a) and b.accepts(mask_b):
            return spell(settled, state), used
        reps = _representatives(a.bounds(mask_a), b.bounds(mask_b))
        used += len(reps)
        if used > allowance:
            return None, used
        for rep in reps:
            nxt = pair_step(a, b, mask_a, mask_b, valid, rep)
            if nxt is None or nxt in settled:
                continue
            estimate = max(a.remaining(nxt[0]), b.remaining(nxt[1]))
            if estimate >= UNREACHABLE:
                continue
            counter += 1
            cost = dots + (valid == V_START and rep == ".")
            heapq.heappush(
                heap, (cost, length + 1 + estimate, -(length + 1), counter, nxt, state, rep)
            )
    return None, used


def spell(parents: Mapping[S, tuple[S | None, str]], state: S) -> str:
    """The word that reaches ``state``: the characters of its chain of ``parents``
    (``state -> (parent, character read to reach it)``; the start's parent is None)."""
    chars: list[str] = []
    cursor: S | None = state
    while cursor is not None:
        parent, ch = parents[cursor]
        chars.append(ch)
        cursor = parent
    return "".join(reversed(chars))


def pair_step(
    a: Automaton, b: Automaton, mask_a: int, mask_b: int, valid: int, ch: str
) -> tuple[int, int, int] | None:
    """Read ``ch`` in both automata and the path-validity automaton: the three next
    states, or None when any of them dies (no word through ``ch`` is in both and a path)."""
    next_valid = valid_step(valid, ch)
    if next_valid < 0:
        return None
    next_a = a.step(mask_a, ch)
    if not next_a:
        return None
    next_b = b.step(mask_b, ch)
    if not next_b:
        return None
    return next_a, next_b, next_valid


@functools.lru_cache(maxsize=16384)
def _representatives(bounds_a: tuple[int, ...], bounds_b: tuple[int, ...]) -> tuple[str, ...]:
    """One character per elementary interval of both label sets, best-ranked first.

    Every label is a union of elementary intervals, so all characters of one interval lead
    to the same successor: one representative per interval explores every successor.
    """
    ordered = sorted({*_FIXED_BOUNDS, *bounds_a, *bounds_b})
    return tuple(sorted((pick(lo, hi - 1) for lo, hi in itertools.pairwise(ordered)), key=_rank))


def pick(lo: int, hi: int, preferred: str = _PREFERRED) -> str:
    """A readable character of the interval ``[lo, hi]`` if it has one: the first of
    ``preferred`` in it, else its first printable non-space character, else ``lo``."""
    for ch in preferred:
        if lo <= ord(ch) <= hi:
            return ch
    for cp in range(lo, min(hi, lo + 255) + 1):
        ch = chr(cp)
        if ch.isprintable() and not ch.isspace():
            return ch
    return chr(lo)


def _rank(ch: str) -> int:
    return _PREFERRED_RANK.get(ch, len(_PREFERRED) + ord(ch))


def valid_step(state: int, ch: str) -> int:
    """Step the path-validity automaton; -1 when the word can no longer be a path."""
    if ch == "/":
        return V_START if state == V_NAME else -1
    if ch == ".":
        return V_DOT if state == V_START else V_DOTDOT if state == V_DOT else V_NAME
    return V_NAME
