"""Carve-outs: a path pattern minus the patterns cut out of it (pure).

A split resolution divides only the contested targets. When a claim's glob covers a
target assigned to another claim (``docs/**`` against the holder's ``docs/a.md``), the
claim keeps its glob with that target *carved out*: ``docs/**`` minus ``docs/a.md``
still covers ``docs/b.md``. A carved pattern matches a path when the pattern does and
none of its carve-outs does.

:func:`intersect_carved` finds a path two carved patterns share. The plain witness of
:func:`~detente.domain.overlap.globs.intersect` answers most pairs; when a carve-out
excludes it, a breadth-first search over the product of both automata and every
carve-out's automaton (state sets, as in :mod:`~detente.domain.overlap.search`, plus
the path-validity automaton) finds the shortest path both match and no carve-out
matches, or proves there is none. It is charged to the same :class:`Budget` and raises
:class:`Undecided` past it (callers treat the pair as overlapping).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Sequence

from detente.domain.overlap.globs import (
    Budget,
    CompiledPattern,
    Undecided,
    compile_pattern,
    intersect_compiled,
)
from detente.domain.overlap.search import V_NAME, V_START, pair_step, pick, spell

__all__ = [
    "carved_covers",
    "carved_matches",
    "carved_may_overlap",
    "intersect_carved",
    "is_covered",
]

_State = tuple[int, int, int, tuple[int, ...]]
_MAX_CODE_POINT = 0x110000


def carved_matches(pattern: str, carve_outs: Iterable[str], path: str) -> bool:
    """Does ``pattern`` minus ``carve_outs`` match the concrete ``path``?"""
    if not compile_pattern(pattern).matches(path):
        return False
    return not any(compile_pattern(c).matches(path) for c in carve_outs)


def carved_covers(pattern: str, carve_outs: Iterable[str], path: str) -> bool:
    """Does ``pattern`` minus ``carve_outs`` claim the concrete ``path`` for a write
    (:meth:`~detente.domain.overlap.globs.CompiledPattern.covers`: a directory pattern
    also claims the directory's own entry, a submodule's gitlink)?"""
    if not compile_pattern(pattern).covers(path):
        return False
    return not any(compile_pattern(c).covers(path) for c in carve_outs)


def carved_may_overlap(pattern: str, carve_outs: Sequence[str], other: str) -> bool:
    """Does ``pattern`` minus ``carve_outs`` share a path with ``other``? Undecided: yes
    (the conservative reading, as :func:`~detente.domain.overlap.globs.may_overlap`)."""
    try:
        return intersect_carved(pattern, carve_outs, other, ()) is not None
    except Undecided:
        return True


def is_covered(pattern: str, by: Sequence[str], *, budget: Budget | None = None) -> bool:
    """Is every path ``pattern`` matches also matched by one of ``by``?

    True means ``pattern`` minus ``by`` is empty. Undecided counts as not covered, so a
    caller keeps the pattern (with carve-outs) rather than drop scope.
    """
    try:
        return intersect_carved(pattern, (), pattern, by, budget=budget) is None
    except Undecided:
        return False


def intersect_carved(
    a: str,
    a_carve_outs: Sequence[str],
    b: str,
    b_carve_outs: Sequence[str],
    *,
    budget: Budget | None = None,
) -> str | None:
    """A path ``a`` and ``b`` both match and no carve-out of either matches, or None.

    Args:
        a: a path pattern; ``a_carve_outs`` its carve-outs.
        b: another; ``b_carve_outs`` its carve-outs.
        budget: the search work allowed (default: a fresh :class:`Budget`).

    Returns:
        A witness path, or None when the carved patterns are disjoint.

    Raises:
        Undecided: the budget ran out before the answer was known.
    """
    budget = budget or Budget()
    ca, cb = compile_pattern(a), compile_pattern(b)
    cuts = [compile_pattern(c) for c in dict.fromkeys((*a_carve_outs, *b_carve_outs))]
    witness = intersect_compiled(ca, cb, budget=budget)
    if witness is None or not any(c.matches(witness) for c in cuts):
        return witness
    for spelled in (ca.pattern, cb.pattern):  # the literal rule: a pattern's own spelling
        if ca.matches(spelled) and cb.matches(spelled) and not _cut(cuts, spelled):
            return spelled
    if ca.is_literal or cb.is_literal:
        return None  # the one path they share is carved out
    return _search(ca, cb, cuts, budget)


def _cut(cuts: Sequence[CompiledPattern], path: str) -> bool:
    return any(c.matches(path) for c in cuts)


def _search(
    ca: CompiledPattern, cb: CompiledPattern, cuts: Sequence[CompiledPattern], budget: Budget
) -> str | None:
    """Breadth-first over (a's states, b's states, validity, each carve-out's states)."""
    allowance = budget.allowance()
    used = 0
    start: _State = (1, 1, V_START, tuple(1 for _ in cuts))
    parents: dict[_State, tuple[_State | None, str]] = {start: (None, "")}
    queue: deque[_State] = deque([start])
    while queue:
        state = queue.popleft()
        mask_a, mask_b, valid, cut_masks = state
        if (
            valid == V_NAME
            and ca.accepts(mask_a)
            and cb.accepts(mask_b)
            and not any(c.accepts(m) for c, m in zip(cuts, cut_masks, strict=True))
        ):
            word = spell(parents, state)
            if not _cut(cuts, word):  # a carve-out's own spelling is cut too
                budget.spent += used
                return word
        bounds = {*ca.bounds(mask_a), *cb.bounds(mask_b), ord("."), ord("/"), ord("/") + 1}
        for c, m in zip(cuts, cut_masks, strict=True):
            if m:
                bounds.update(c.bounds(m))
        reps = _representatives(bounds)
        used += len(reps)
        if used > allowance:
            budget.spent += used
            raise Undecided(ca.pattern, cb.pattern, allowance)
        for ch in reps:
            pair = pair_step(ca, cb, mask_a, mask_b, valid, ch)
            if pair is None:
                continue
            nxt = (
                *pair,
                tuple(c.step(m, ch) if m else 0 for c, m in zip(cuts, cut_masks, strict=True)),
            )
            if nxt not in parents:
                parents[nxt] = (state, ch)
                queue.append(nxt)
    budget.spent += used
    return None


def _representatives(bounds: set[int]) -> list[str]:
    """One character per elementary interval between the label bounds (all characters
    of an interval lead every automaton to the same successors)."""
    ordered = sorted({0, _MAX_CODE_POINT, *bounds})
    reps = [pick(lo, hi - 1, _PREFERRED) for lo, hi in itertools.pairwise(ordered)]
    return sorted(reps, key=lambda ch: _RANK.get(ch, len(_RANK) + ord(ch)))


_PREFERRED = "xyzabcdefghijklmnopqrstuvw0123456789_-./"
_RANK = {ch: i for i, ch in enumerate(_PREFERRED)}
