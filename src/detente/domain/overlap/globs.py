"""Glob semantics over ``/``-separated paths, and exact glob-vs-glob intersection.

Semantics (patterns are normalised with :func:`~detente.domain.overlap.paths.normalize_pattern`
first, so ``docs/`` means ``docs/**``):

* ``*`` matches any run of non-``/`` characters within one segment, the empty run and a
  leading ``.`` included: dotfiles are matched like any other file. A segment that is only
  ``*`` still needs one character, because path segments are never empty.
* ``?`` matches one non-``/`` character; ``[abc]``, ``[a-z]``, ``[!abc]`` and ``[^abc]``
  match one non-``/`` character in (or not in) the class.
* ``**`` as a whole segment matches zero or more whole segments: ``a/**/b`` matches ``a/b``,
  ``a/x/b`` and ``a/x/y/b``; ``**/b`` matches ``b``. A trailing ``a/**`` matches every path
  strictly under ``a/`` and not ``a`` itself; ``**`` alone matches every path.
* A pattern without wildcards matches exactly that path, never the paths under it.
* A path is a non-empty ``/``-joined run of non-empty segments, none of them ``.`` or
  ``..``, with no control character (category Cc) or surrogate. A string that is not a path
  matches nothing.

Each pattern compiles (:mod:`~detente.domain.overlap.nfa`) to an epsilon-free NFA whose
transitions are labelled with exact sets of code points
(:mod:`~detente.domain.overlap.charsets`: sorted disjoint intervals), so classes, negations
and ``*`` are exact over all of Unicode. This module matches paths against compiled
patterns, and :func:`intersect` searches the product of two such automata (on sets of
states, plus a small automaton that keeps the witness a valid path) for the cheapest word
both accept.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import re
from typing import Final

from detente.domain.overlap.charsets import CharSet
from detente.domain.overlap.nfa import (
    UNREACHABLE,
    Transitions,
    bits,
    build_nfa,
    distances_to_accept,
    label_bounds,
    literal_prefix,
    literal_segments,
    literal_suffix,
    successors,
)
from detente.domain.overlap.paths import GLOBSTAR, normalize_pattern, parse_segments

__all__ = [
    "CharSet",
    "CompiledPattern",
    "compile_pattern",
    "intersect",
    "intersect_compiled",
    "matches",
]

# Preferred witness characters, best first: readable, lower case (case-folded repos).
_PREFERRED: Final = "xyzabcdefghijklmnopqrstuvw0123456789_-.XYZABCDEFGHIJKLMNOPQRSTUVW/"
_PREFERRED_RANK: Final = {ch: rank for rank, ch in enumerate(_PREFERRED)}
# '.' and '/' are distinguished by the path-validity automaton: keep them alone in
# their elementary intervals.
_FIXED_BOUNDS: Final = (ord("."), ord("/"), ord("/") + 1)

# Path-validity automaton over one segment: at a segment start, after ".", after "..",
# or inside an ordinary segment (the only accepting state, the only one '/' may leave).
_V_START, _V_DOT, _V_DOTDOT, _V_NAME = 0, 1, 2, 3
_STEP_CACHE_LIMIT: Final = 1 << 14
_NOT_PATH_CHAR: Final = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


class CompiledPattern:
    """A normalised pattern, its literal outline and its NFA.

    Attributes:
        pattern: the canonical pattern text.
        segments: the parsed segments.
        is_literal: no wildcard at all: the pattern matches exactly one path.
        literal_segments: the leading segments that contain no wildcard.
        prefix: literal text every matching path starts with.
        suffix: literal text every matching path ends with.
        extension: the text after the last ``.`` of ``suffix`` when ``suffix`` has a ``.``
            (every matching path then ends with ``"." + extension``), else ``None``.
    """

    __slots__ = (
        "_accepting",
        "_bounds",
        "_dist",
        "_entry",
        "_remaining",
        "_steps",
        "_subtree",
        "_trans",
        "_witness",
        "extension",
        "is_literal",
        "literal_segments",
        "pattern",
        "prefix",
        "segments",
        "suffix",
    )

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.segments = parse_segments(pattern)
        lead = self.literal_segments = literal_segments(self.segments)
        self.is_literal = len(lead) == len(self.segments)
        self.prefix = literal_prefix(self.segments)
        self.suffix = literal_suffix(self.segments)
        self.extension = self.suffix.rsplit(".", 1)[1] if "." in self.suffix else None
        # "dir/**": the commonest wildcard claim, decided by a prefix test.
        self._subtree = len(lead) == len(self.segments) - 1 and self.segments[-1] is GLOBSTAR
        self._trans: tuple[Transitions, ...] = ()
        self._accepting = -1  # the NFA is built on first use: literal patterns rarely need it
        self._steps: dict[tuple[int, str], int] = {}
        self._bounds: dict[int, tuple[int, ...]] = {}
        self._entry: tuple[int, int, int] | None = None
        self._dist: tuple[int, ...] = ()
        self._remaining: dict[int, int] = {}
        self._witness: tuple[str | None] | None = None

    def __repr__(self) -> str:
        return f"CompiledPattern({self.pattern!r})"

    def matches(self, path: str) -> bool:
        """Whether the path (normalised, see ``normalize_path``) matches this pattern."""
        return self.matches_valid(path) and (self.is_literal or _is_path(path))

    def matches_valid(self, path: str) -> bool:
        """:meth:`matches` for a string already known to be a valid path."""
        if self.is_literal:
            return path == self.pattern
        if not (path.startswith(self.prefix) and path.endswith(self.suffix)):
            return False
        if self._subtree:
            return len(path) > len(self.prefix)
        return self.accepts(self.read(path))

    def step(self, mask: int, ch: str) -> int:
        """The set of NFA states (a bit mask) reached from ``mask`` by reading ``ch``."""
        key = (mask, ch)
        nxt = self._steps.get(key)
        if nxt is not None:
            return nxt
        nxt = successors(self._nfa(), mask, ch)
        if len(self._steps) >= _STEP_CACHE_LIMIT:
            self._steps.clear()
        self._steps[key] = nxt
        return nxt

    def read(self, text: str, mask: int = 1) -> int:
        """The set of NFA states reached from ``mask`` (default: the start) by ``text``."""
        for ch in text:
            if not mask:
                break
            mask = self.step(mask, ch)
        return mask

    def entry(self) -> tuple[int, int, int]:
        """After reading :attr:`prefix`: (NFA states, validity state, dot-segments so far)."""
        if self._entry is None:
            valid, dots = _V_START, 0
            for ch in self.prefix:
                dots += valid == _V_START and ch == "."
                valid = _valid_step(valid, ch)
            self._entry = (self.read(self.prefix) if valid >= 0 else 0, valid, dots)
        return self._entry

    def witness(self) -> str | None:
        """The cheapest path this pattern matches (see :func:`intersect`), or ``None``."""
        if self._witness is None:
            self._witness = (_cheapest_common_word(self, self),)
        return self._witness[0]

    def accepts(self, mask: int) -> bool:
        """Whether the state set ``mask`` holds an accepting state."""
        if self._accepting < 0:
            self._nfa()
        return bool(mask & self._accepting)

    def remaining(self, mask: int) -> int:
        """A lower bound on the characters left to read from ``mask`` to acceptance.

        The fewest transitions from any state of ``mask`` to an accepting state
        (:data:`~detente.domain.overlap.nfa.UNREACHABLE` when there is none). It never
        overestimates and drops by at most one per character, which makes it a consistent
        A* heuristic.
        """
        known = self._remaining.get(mask)
        if known is None:
            self._nfa()
            known = min((self._dist[q] for q in bits(mask)), default=UNREACHABLE)
            self._remaining[mask] = known
        return known

    def _nfa(self) -> tuple[Transitions, ...]:
        if self._accepting < 0:
            self._trans, self._accepting = build_nfa(self.segments)
            self._dist = distances_to_accept(self._trans, self._accepting)
        return self._trans

    def bounds(self, mask: int) -> tuple[int, ...]:
        """Sorted interval bounds of the labels leaving the state set ``mask``.

        Each label is a union of intervals ``[lo, hi]``; this gives every ``lo`` and
        ``hi + 1``, so the characters between two consecutive bounds all behave alike.
        """
        known = self._bounds.get(mask)
        if known is None:
            known = self._bounds[mask] = label_bounds(self._nfa(), mask)
        return known


@functools.lru_cache(maxsize=8192)
def compile_pattern(pattern: str) -> CompiledPattern:
    """Normalise and compile a path pattern (cached).

    Args:
        pattern: a path pattern, normalised or not (``docs/`` compiles as ``docs/**``);
            case folding is the caller's business (normalise with ``case_insensitive``).

    Returns:
        The compiled pattern.

    Raises:
        ValidationError: code ``validation_error`` when the pattern is invalid (see
            ``normalize_pattern``).
    """
    canonical = normalize_pattern(pattern)
    if canonical != pattern:
        return compile_pattern(canonical)
    return CompiledPattern(canonical)


def matches(pattern: str, path: str) -> bool:
    """Whether a concrete path matches a path pattern.

    Args:
        pattern: a path pattern (normalised on the way in).
        path: a normalised repo-relative path (see ``normalize_path``); its characters are
            all literal. A string that is not a valid path matches nothing.

    Returns:
        True when the pattern matches the path.

    Raises:
        ValidationError: code ``validation_error`` when the pattern is invalid.
    """
    return compile_pattern(pattern).matches(path)


def intersect(a: str, b: str) -> str | None:
    """Find a path both patterns match, or prove there is none.

    The search is exact (a product of the two automata, so it always terminates) and
    returns the cheapest witness: fewest segments starting with ``.`` first (``x.py``
    rather than ``.py`` for ``*.py`` vs ``**/*.py``), then the shortest, then the most
    readable characters (``x`` first). A literal pattern on either side is its own witness.

    Args:
        a: a path pattern (normalised on the way in).
        b: another path pattern.

    Returns:
        A valid path matched by both patterns, or ``None`` when they are disjoint.

    Raises:
        ValidationError: code ``validation_error`` when either pattern is invalid.
    """
    return intersect_compiled(compile_pattern(a), compile_pattern(b))


def intersect_compiled(ca: CompiledPattern, cb: CompiledPattern) -> str | None:
    """:func:`intersect` on patterns already compiled with :func:`compile_pattern`.

    Args:
        ca: a compiled pattern.
        cb: another compiled pattern.

    Returns:
        A valid path matched by both patterns, or ``None`` when they are disjoint.
    """
    if ca.is_literal:  # a canonical literal pattern is a valid path
        return ca.pattern if cb.matches_valid(ca.pattern) else None
    if cb.is_literal:
        return cb.pattern if ca.matches_valid(cb.pattern) else None
    if not (_compatible_prefixes(ca.prefix, cb.prefix) and _compatible_suffixes(ca, cb)):
        return None
    # "dir/**" holds every path of a pattern whose literal prefix starts with "dir/".
    if ca._subtree and cb.prefix.startswith(ca.prefix):
        return cb.witness()
    if cb._subtree and ca.prefix.startswith(cb.prefix):
        return ca.witness()
    return _cheapest_common_word(ca, cb)


def _compatible_prefixes(p: str, q: str) -> bool:
    return p.startswith(q) or q.startswith(p)


def _compatible_suffixes(a: CompiledPattern, b: CompiledPattern) -> bool:
    return a.suffix.endswith(b.suffix) or b.suffix.endswith(a.suffix)


_State = tuple[int, int, int]


def _cheapest_common_word(a: CompiledPattern, b: CompiledPattern) -> str | None:
    """A* over (states of a, states of b, validity state); cost (dot-segments, length).

    Every common word starts with the longer of the two literal prefixes (they are
    compatible), so both automata read it first and the search starts after it. The
    length is estimated from below by what each automaton still needs to accept.
    """
    if len(a.prefix) >= len(b.prefix):
        lead = a.prefix
        mask_a, valid, dots = a.entry()
        mask_b = b.read(lead[len(b.prefix) :], b.entry()[0])
    else:
        lead = b.prefix
        mask_b, valid, dots = b.entry()
        mask_a = a.read(lead[len(a.prefix) :], a.entry()[0])
    if valid < 0 or not mask_a or not mask_b:
        return None
    estimate = max(a.remaining(mask_a), b.remaining(mask_b))
    if estimate >= UNREACHABLE:
        return None
    start: _State = (mask_a, mask_b, valid)
    heap: list[tuple[int, int, int, int, _State, _State | None, str]] = [
        (dots, len(lead) + estimate, len(lead), 0, start, None, lead)
    ]
    settled: dict[_State, tuple[_State | None, str]] = {}
    counter = 0
    while heap:
        dots, _, length, _, state, parent, ch = heapq.heappop(heap)
        if state in settled:
            continue
        settled[state] = (parent, ch)
        mask_a, mask_b, valid = state
        if valid == _V_NAME and a.accepts(mask_a) and b.accepts(mask_b):
            return _spell(settled, state)
        for rep in _representatives(a.bounds(mask_a), b.bounds(mask_b)):
            next_valid = _valid_step(valid, rep)
            if next_valid < 0:
                continue
            next_a = a.step(mask_a, rep)
            if not next_a:
                continue
            next_b = b.step(mask_b, rep)
            if not next_b:
                continue
            nxt = (next_a, next_b, next_valid)
            if nxt in settled:
                continue
            estimate = max(a.remaining(next_a), b.remaining(next_b))
            if estimate >= UNREACHABLE:
                continue
            counter += 1
            cost = dots + (valid == _V_START and rep == ".")
            heapq.heappush(
                heap, (cost, length + 1 + estimate, length + 1, counter, nxt, state, rep)
            )
    return None


def _spell(settled: dict[_State, tuple[_State | None, str]], state: _State) -> str:
    chars: list[str] = []
    cursor: _State | None = state
    while cursor is not None:
        parent, ch = settled[cursor]
        chars.append(ch)
        cursor = parent
    return "".join(reversed(chars))


@functools.lru_cache(maxsize=16384)
def _representatives(bounds_a: tuple[int, ...], bounds_b: tuple[int, ...]) -> tuple[str, ...]:
    """One character per elementary interval of both label sets, best-ranked first.

    Every label is a union of elementary intervals, so all characters of one interval lead
    to the same successor: one representative per interval explores every successor.
    """
    ordered = sorted({*_FIXED_BOUNDS, *bounds_a, *bounds_b})
    return tuple(sorted((_pick(lo, hi - 1) for lo, hi in itertools.pairwise(ordered)), key=_rank))


def _pick(lo: int, hi: int) -> str:
    """A readable character of the interval ``[lo, hi]`` if it has one."""
    for ch in _PREFERRED:
        if lo <= ord(ch) <= hi:
            return ch
    for cp in range(lo, min(hi, lo + 255) + 1):
        ch = chr(cp)
        if ch.isprintable() and not ch.isspace():
            return ch
    return chr(lo)


def _rank(ch: str) -> int:
    return _PREFERRED_RANK.get(ch, len(_PREFERRED) + ord(ch))


def _valid_step(state: int, ch: str) -> int:
    """Step the path-validity automaton; -1 when the word can no longer be a path."""
    if ch == "/":
        return _V_START if state == _V_NAME else -1
    if ch == ".":
        return _V_DOT if state == _V_START else _V_DOTDOT if state == _V_DOT else _V_NAME
    return _V_NAME


def _is_path(path: str) -> bool:
    return (
        bool(path)
        and _NOT_PATH_CHAR.search(path) is None
        and all(seg not in ("", ".", "..") for seg in path.split("/"))
    )
