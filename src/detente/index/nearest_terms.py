"""The lexical rows of :class:`~detente.index.nearest.NearestTexts` (pure Python).

Keyed texts as stemmed term counts (:func:`detente.index.lexical.terms`) in an inverted
index (term -> {row: count}); the number of postings of a term is its document frequency
in the corpus of the kept texts, so the BM25 weights of :mod:`detente.index.lexical` are
known at query time without a pass over the rows.

A query scores only the rows that can reach the threshold (the MaxScore idea, Turtle and
Flood 1995): a row's cosine is at most the sum of the query's weights on the terms it
shares, divided by the query's norm (each of the row's weights is at most its norm). The
query's terms are visited by weight, heaviest first; once the weight still to come cannot
reach the threshold, rows met only from then on are not considered (a term most holders
use, "fix" or "the", touches only the rows already met). The rows whose bound reaches
the threshold are scored exactly with :func:`~detente.index.lexical.cosine`, the function
a comparison with every text calls, on the same weights: the same floats.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from detente.index.keyed_rows import KeyedRows
from detente.index.lexical import cosine, idf, norm, terms, weights

__all__ = ["TermRows"]

# A bound this close below the threshold is still scored: the bound and the score are
# rounded floats, and a row must never be skipped that the full comparison keeps.
_SLACK = 1e-9


class TermRows(KeyedRows):
    """Keyed texts as term counts, and their top-k query by BM25-weighted cosine, with
    IDF over the kept texts (but an excluded key). Thread-safe."""

    def __init__(self) -> None:
        super().__init__()
        self._counts: list[Counter[str] | None] = []
        self._postings: dict[str, dict[int, int]] = {}

    def update(self, put: Iterable[tuple[str, str]], drop: Iterable[str]) -> None:
        """Forget the keys in ``drop`` (and the blank texts of ``put``), then keep (or
        replace) each ``(key, text)`` of ``put``."""
        given = list(put)
        items = [(k, t) for k, t in given if t.strip()]
        with self._lock:
            for key in [*drop, *(k for k, _ in given)]:
                self._drop(key)
            for key, text in items:
                self._put(key, text)

    def top(
        self, query: str, k: int, threshold: float, *, exclude: str | None = None
    ) -> list[tuple[float, str]]:
        """The ``k`` texts most similar to ``query`` at or above ``threshold``, but
        ``exclude`` (also left out of the corpus): ``[(score, key)]`` by score
        descending, then key."""
        asked = Counter(terms(query))
        if not asked:
            return []
        with self._lock:
            skip = self._row.get(exclude) if exclude is not None else None
            skipped = self._counts[skip] if skip is not None else None
            size = len(self._row) - (skip is not None)
            if size <= 0:
                return []

            known: dict[str, float] = {}  # each term's IDF once per query

            def term_idf(term: str) -> float:
                value = known.get(term)
                if value is None:
                    found = len(self._postings.get(term, ()))
                    value = known[term] = idf(
                        size, found - (skipped is not None and term in skipped)
                    )
                return value

            mine = weights(asked, term_idf)
            mine_norm = norm(mine)
            rows = self._candidates(mine, mine_norm, threshold, skip)
            found: list[tuple[float, str]] = []
            for row in rows:
                counts = self._counts[row]
                assert counts is not None
                theirs = weights(counts, term_idf)
                score = cosine(mine, mine_norm, theirs, norm(theirs))
                if score >= threshold:
                    found.append((score, str(self._keys[row])))
        return sorted(found, key=lambda p: (-p[0], p[1]))[:k]

    def _candidates(
        self, mine: dict[str, float], mine_norm: float, threshold: float, skip: int | None
    ) -> list[int]:
        """The rows whose bound reaches ``threshold`` (see the module docstring)."""
        if threshold <= 0:  # every row qualifies, a row sharing nothing too
            return [r for r, key in enumerate(self._keys) if key is not None and r != skip]
        order = sorted(mine, key=lambda t: (-mine[t], t))
        floor = (threshold - _SLACK) * mine_norm
        to_come = [0.0] * len(order)
        running = 0.0
        for i in range(len(order) - 1, -1, -1):
            running += mine[order[i]]
            to_come[i] = running
        bound: dict[int, float] = {}
        for i, term in enumerate(order):
            weight = mine[term]
            posting = self._postings.get(term, {})
            if to_come[i] >= floor:
                for row in posting:
                    if row in bound:
                        bound[row] += weight
                    elif row != skip:
                        bound[row] = weight
            elif len(bound) < len(posting):  # only rows already met: walk the fewer
                for row in bound:
                    if row in posting:
                        bound[row] += weight
            else:
                for row in posting:
                    if row in bound:
                        bound[row] += weight
        return [row for row, total in bound.items() if total >= floor]

    def _put(self, key: str, text: str) -> None:
        if self._free:
            row = self._free.pop()
        else:
            row = len(self._keys)
            self._keys.append(None)
            self._texts.append("")
            self._counts.append(None)
        counts = Counter(terms(text))
        self._row[key] = row
        self._keys[row] = key
        self._texts[row] = text
        self._counts[row] = counts
        for term, count in counts.items():
            self._postings.setdefault(term, {})[row] = count

    def _drop(self, key: str) -> None:
        row = self._row.pop(key, None)
        if row is None:
            return
        counts = self._counts[row]
        for term in counts or ():
            posting = self._postings.get(term)
            if posting is not None:
                posting.pop(row, None)
                if not posting:
                    del self._postings[term]
        self._keys[row] = None
        self._texts[row] = ""
        self._counts[row] = None
        self._free.append(row)
