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
* Like a git pathspec, every pattern also matches the path spelled exactly like it:
  ``app/[id]/page.tsx`` matches the file ``app/[id]/page.tsx`` (a Next.js route) as well as
  ``app/i/page.tsx``. :func:`~detente.domain.overlap.paths.escape` writes the pattern of
  one literal path (``app/[[]id]/page.tsx``).
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

The search is bounded: a :class:`Budget` caps the transitions of the product automaton
it may try (default :data:`SEARCH_BUDGET`). Subset construction is exponential in the
worst case (``*a???...`` against ``*b???...``), so an exact answer is not always
affordable; past the budget the search (:mod:`~detente.domain.overlap.search`) raises
:class:`Undecided` and callers treat the pair as overlapping, never as disjoint (the
overlap analysis reports it as blocking, "undecided within budget").
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

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
from detente.domain.overlap.search import (
    SEARCH_BUDGET,
    V_START,
    Budget,
    Undecided,
    cheapest_common_word,
    valid_step,
)
from detente.domain.overlap.shapes import (
    deep_tail,
    segments_clash,
    shallow_tail,
    shape_witness,
    tail_witness,
)

__all__ = [
    "SEARCH_BUDGET",
    "Budget",
    "CharSet",
    "CompiledPattern",
    "Undecided",
    "compile_pattern",
    "covers",
    "intersect",
    "intersect_compiled",
    "matches",
    "may_overlap",
]

_STEP_CACHE_LIMIT: Final = 1 << 14
_NOT_PATH_CHAR: Final = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


#: The NFA caches of a pattern whose NFA is not built yet (read, never written to: every
#: write follows :meth:`CompiledPattern._nfa`, which gives the pattern dicts of its own).
_NO_CACHE: dict[Any, Any] = {}


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
        "_shallow",
        "_steps",
        "_subtree",
        "_tail",
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
        # "dir/**/*.py", "**/*.go": every path below the prefix ending with the tail.
        self._tail = deep_tail(self.segments)
        # "dir/*.py", "*.md": one segment below the prefix ending with the tail.
        self._shallow = shallow_tail(self.segments)
        self._trans: tuple[Transitions, ...] = ()
        self._accepting = -1  # the NFA is built on first use: literal patterns rarely need it
        # The NFA's caches: shared empty dicts (only read) until the NFA is built, since
        # most patterns of a large index never need it (3 dicts less a pattern).
        self._steps: dict[tuple[int, str], int] = _NO_CACHE
        self._bounds: dict[int, tuple[int, ...]] = _NO_CACHE
        self._entry: tuple[int, int, int] | None = None
        self._dist: tuple[int, ...] = ()
        self._remaining: dict[int, int] = _NO_CACHE
        self._witness: tuple[str | None] | None = None

    def __repr__(self) -> str:
        return f"CompiledPattern({self.pattern!r})"

    @property
    def is_subtree(self) -> bool:
        """Whether the pattern reads ``dir/**`` (or ``**``): every path strictly under
        its literal segments, nothing else."""
        return self._subtree

    def matches(self, path: str) -> bool:
        """Whether the path (normalised, see ``normalize_path``) matches this pattern:
        it is spelled like the pattern, or the glob matches it."""
        return self.matches_valid(path) and (self.is_literal or _is_path(path))

    def covers(self, path: str) -> bool:
        """Whether this pattern claims the concrete ``path``: it :meth:`matches` it, or the
        pattern claims a whole directory (``D/**``) and ``path`` is that directory's own
        entry ``D``: a submodule's gitlink (mode 160000) is one path, not a directory of
        files, and a claim of ``vendor/lib/`` holds the pointer ``vendor/lib``."""
        if self.matches(path):
            return True
        segments = self.segments
        if len(segments) < 2 or segments[-1] is not GLOBSTAR:
            return False
        return compile_pattern(self.pattern[: -len("/**")]).matches(path)

    def matches_valid(self, path: str) -> bool:
        """:meth:`matches` for a string already known to be a valid path."""
        if self.is_literal or path == self.pattern:
            return path == self.pattern
        return self.matches_glob(path)

    def matches_glob(self, path: str) -> bool:
        """Whether the glob reading alone matches a valid path (no literal rule)."""
        if self.is_literal:
            return path == self.pattern
        if not (path.startswith(self.prefix) and path.endswith(self.suffix)):
            return False
        if self._subtree:
            return len(path) > len(self.prefix)
        if self._tail is not None:  # "dir/**/*.py": below "dir/" and ending with ".py"
            return len(path) > len(self.prefix)
        if self._shallow is not None:  # "dir/*.py": one segment below "dir/", ".py" at its end
            rest = path[len(self.prefix) :]
            return "/" not in rest and rest.endswith(self._shallow)
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
            valid, dots = V_START, 0
            for ch in self.prefix:
                dots += valid == V_START and ch == "."
                valid = valid_step(valid, ch)
            self._entry = (self.read(self.prefix) if valid >= 0 else 0, valid, dots)
        return self._entry

    def witness(self) -> str:
        """The cheapest path this pattern matches (see :func:`intersect`).

        Every pattern matches at least the path spelled like it, which is the answer
        when the glob reading matches nothing or the search runs out of budget.
        """
        if self._witness is None:
            found = shape_witness(self.segments)
            if found is None:
                try:
                    found = cheapest_common_word(self, self, Budget())
                except Undecided:
                    found = None
            self._witness = (found or self.pattern,)
        return self._witness[0] or self.pattern

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
            self._steps, self._bounds, self._remaining = {}, {}, {}
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
        ValidationError: code ``validation_error`` when the pattern is structurally invalid
            (see ``normalize_pattern``). The input policy (length and wildcard limits,
            ``.git`` and white-space segments) belongs to the edge: a pattern the log
            already holds compiles whatever today's policy says, so replay never breaks.
    """
    canonical = normalize_pattern(pattern, policy=False)  # stored patterns replay as they are
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


def covers(pattern: str, path: str) -> bool:
    """:meth:`CompiledPattern.covers` for a canonical pattern (compiled once, cached)."""
    return compile_pattern(pattern).covers(path)


def intersect(a: str, b: str, *, budget: Budget | None = None) -> str | None:
    """Find a path both patterns match, or prove there is none.

    The search is exact within its budget (a product of the two automata) and returns
    the cheapest witness of the glob readings: fewest segments starting with ``.`` first
    (``x.py`` rather than ``.py`` for ``*.py`` vs ``**/*.py``), then the shortest, then the
    most readable characters (``x`` first). When the glob readings are disjoint, a path
    spelled like one pattern and matched by the other is the witness (the literal rule).
    A literal pattern on either side is its own witness.

    Args:
        a: a path pattern (normalised on the way in).
        b: another path pattern.
        budget: the work the search may do (default: a fresh :class:`Budget` of
            :data:`SEARCH_BUDGET` units); share one across the searches of a request
            to cap their sum.

    Returns:
        A valid path matched by both patterns, or ``None`` when they are disjoint.

    Raises:
        ValidationError: code ``validation_error`` when either pattern is invalid.
        Undecided: the budget ran out first; treat the patterns as overlapping.
    """
    return intersect_compiled(compile_pattern(a), compile_pattern(b), budget=budget)


def may_overlap(a: str, b: str) -> bool:
    """Whether two patterns may share a path: True when they do or when it is undecided.

    The conservative reading of :func:`intersect` for callers that need no witness
    (filters, "is this part of what the claim asked for").

    Raises:
        ValidationError: code ``validation_error`` when either pattern is invalid.
    """
    try:
        return intersect(a, b) is not None
    except Undecided:
        return True


def intersect_compiled(
    ca: CompiledPattern, cb: CompiledPattern, *, budget: Budget | None = None
) -> str | None:
    """:func:`intersect` on patterns already compiled with :func:`compile_pattern`.

    Takes and returns what :func:`intersect` does (``ca`` and ``cb`` compiled); raises
    only :class:`Undecided` (compiled patterns are valid).
    """
    if ca.is_literal:  # a canonical literal pattern is a valid path
        return ca.pattern if cb.matches_valid(ca.pattern) else None
    if cb.is_literal:
        return cb.pattern if ca.matches_valid(cb.pattern) else None
    undecided: Undecided | None = None
    try:
        found = _glob_intersection(ca, cb, budget or Budget())
    except Undecided as exc:
        found, undecided = None, exc
    if found is not None:
        return found
    # The literal rule: a pattern's own spelling is one more path it matches.
    if cb.matches_valid(ca.pattern):
        return ca.pattern
    if ca.matches_valid(cb.pattern):
        return cb.pattern
    if undecided is not None:
        raise undecided
    return None


def _glob_intersection(ca: CompiledPattern, cb: CompiledPattern, budget: Budget) -> str | None:
    """The cheapest path both glob readings match, or ``None`` (the literal rule aside)."""
    if not (_compatible_prefixes(ca.prefix, cb.prefix) and _compatible_suffixes(ca, cb)):
        return None
    # "dir/**" holds every path of a pattern whose literal prefix starts with "dir/".
    # (The other's witness, glob or literal, starts with its prefix: it is under "dir/".)
    if ca._subtree and cb.prefix.startswith(ca.prefix):
        return cb.witness()
    if cb._subtree and ca.prefix.startswith(cb.prefix):
        return ca.witness()
    # "dir/**/*.py" holds every path under "dir/" ending with ".py": a pattern whose
    # literal prefix and suffix say so is inside it, and its cheapest path is theirs.
    if _holds(ca, cb):
        return cb.witness()
    if _holds(cb, ca):
        return ca.witness()
    # "dir/**" and "**/*.py" (dir below the other's prefix): the paths under "dir/"
    # ending with ".py", the cheapest being one segment right below "dir/".
    if ca._subtree and cb._tail is not None and ca.prefix.startswith(cb.prefix):
        return tail_witness(ca.prefix, cb._tail)
    if cb._subtree and ca._tail is not None and cb.prefix.startswith(ca.prefix):
        return tail_witness(cb.prefix, ca._tail)
    if segments_clash(ca.segments, cb.segments):
        return None
    return cheapest_common_word(ca, cb, budget)


def _holds(outer: CompiledPattern, inner: CompiledPattern) -> bool:
    """Whether ``outer`` reads ``L/**/*<tail>`` and every path of ``inner`` is below
    ``L/`` and ends with ``tail`` (glob readings)."""
    tail = outer._tail
    return (
        tail is not None and inner.prefix.startswith(outer.prefix) and inner.suffix.endswith(tail)
    )


def _compatible_prefixes(p: str, q: str) -> bool:
    return p.startswith(q) or q.startswith(p)


def _compatible_suffixes(a: CompiledPattern, b: CompiledPattern) -> bool:
    return a.suffix.endswith(b.suffix) or b.suffix.endswith(a.suffix)


def _is_path(path: str) -> bool:
    return (
        bool(path)
        and _NOT_PATH_CHAR.search(path) is None
        and all(seg not in ("", ".", "..") for seg in path.split("/"))
    )
