"""Answers of ``dir/**`` queries in bulk: the entries below a trie node, kept sorted.

``dir/**`` (the commonest wildcard claim) matches every path strictly under ``dir/``, so
it contains every pattern whose leading literal segments go below ``dir`` (a pattern at
trie node ``dir/a`` only matches paths starting with ``dir/a/`` or equal to ``dir/a``).
Such a pair needs no automaton search: it overlaps, and its witness is the entry's own
cheapest path (:meth:`~detente.domain.overlap.globs.CompiledPattern.witness`, the path
itself for a literal pattern), which is exactly what
:func:`~detente.domain.overlap.globs.intersect_compiled` returns for it (its
``dir/**`` rule).

On a large index these queries have large answers (``test/integration/targets/**``
meets most of ansible's claims), and building and sorting one result tuple per hit
dominated them. So every trie node keeps the result tuples ``(key, pattern, witness)``
of the entries strictly below it, sorted: an answer is a copy of one list, a key is
excluded by two bisections, and the few entries decided one by one (those on the
query's own path through the trie) are merged in. Each entry's tuple is built once and
shared by the lists of all its ancestors; an add or remove costs one bisection and one
list insertion per ancestor.

Entries with carve-outs never enter these lists (their overlaps depend on the carve-outs
and are decided one by one).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from operator import itemgetter

__all__ = ["Answer", "discard", "insert", "merged", "without_key"]

#: ``(key, pattern, witness)``: one overlap as :meth:`PatternIndex.overlapping` reports it.
Answer = tuple[str, str, str | None]

_KEY = itemgetter(0)
#: Above this many extra answers, merging sorts once instead of inserting one by one.
_INSERT_LIMIT = 32


def insert(answers: list[Answer], answer: Answer) -> None:
    """Insert ``answer`` into the sorted list ``answers`` (already there: nothing)."""
    at = bisect.bisect_left(answers, answer)
    if at == len(answers) or answers[at] != answer:
        answers.insert(at, answer)


def discard(answers: list[Answer], key: str, pattern: str) -> None:
    """Remove the answer of ``(key, pattern)`` from the sorted list, if present."""
    at = bisect.bisect_left(answers, (key, pattern))
    if at < len(answers) and answers[at][0] == key and answers[at][1] == pattern:
        del answers[at]


def without_key(answers: list[Answer], key: str | None) -> list[Answer]:
    """A copy of the sorted list without the answers of ``key`` (None: a plain copy)."""
    if key is None:
        return answers.copy()
    start = bisect.bisect_left(answers, key, key=_KEY)
    end = bisect.bisect_right(answers, key, start, key=_KEY)
    return answers[:start] + answers[end:] if end > start else answers.copy()


def merged(answers: list[Answer], extra: Iterable[Answer]) -> list[Answer]:
    """``answers`` (sorted, owned by the caller) with ``extra`` merged in, sorted."""
    more = sorted(extra)
    if len(more) <= _INSERT_LIMIT:
        for answer in more:
            bisect.insort(answers, answer)
        return answers
    answers += more
    answers.sort()  # two sorted runs: one merge pass
    return answers
