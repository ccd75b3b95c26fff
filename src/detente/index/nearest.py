"""The texts most similar to a query among many, scored all at once.

:class:`NearestTexts` keeps keyed texts (the holding claims' objectives) in the form
their :class:`~detente.index.semantic.Similarity` compares them, updated one text at a
time, and scores a query against all of them in one pass:

- semantic mode (:mod:`detente.index.nearest_vectors`): the unit vectors in one
  contiguous ``float32`` matrix; the scores are one matrix-vector product;
- lexical mode (:mod:`detente.index.nearest_terms`): the stemmed term counts in an
  inverted index; the scores are the cosine of BM25-weighted term vectors with IDF over
  the kept texts (:mod:`detente.index.lexical`), computed only for the texts that share
  enough weight with the query to reach the threshold.

The answers are those of :meth:`Similarity.pairwise
<detente.index.semantic.Similarity.pairwise>` with the kept texts (but the excluded one)
as the texts compared against: the same vectors or weights, the same cosine, the same
floats, the same order (score, then key).

This module imports no numpy: the lexical mode, all a default install runs, is pure
Python; the semantic rows (numpy, from the ``semantic`` extra) are imported only when a
semantic-mode index is built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from detente.index.nearest_terms import TermRows
from detente.index.semantic import Similarity

if TYPE_CHECKING:
    from detente.index.nearest_vectors import VectorRows

__all__ = ["NearestTexts"]


class NearestTexts:
    """Keyed texts and their top-k query (thread-safe; see the module docstring).

    Args:
        sim: the similarity whose mode (and, in the semantic mode, vectors) are used.
    """

    def __init__(self, sim: Similarity) -> None:
        self.sim = sim
        self._rows: TermRows | VectorRows
        if sim.mode == "semantic":
            from detente.index.nearest_vectors import VectorRows  # numpy: semantic only

            self._rows = VectorRows(sim)
        else:
            self._rows = TermRows()

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def text(self, key: str) -> str | None:
        """The text kept for ``key`` (None: none)."""
        return self._rows.text(key)

    def update(self, put: Iterable[tuple[str, str]], drop: Iterable[str]) -> None:
        """Forget the keys in ``drop``, then keep (or replace) each ``(key, text)`` of
        ``put``; a blank text is not kept (it is similar to nothing). In the semantic mode
        the new texts are embedded together, in one call."""
        self._rows.update(put, drop)

    def top(
        self, query: str, k: int, threshold: float, *, exclude: str | None = None
    ) -> list[tuple[float, str]]:
        """The ``k`` texts most similar to ``query`` at or above ``threshold``, but
        ``exclude``: ``[(score, key)]`` by score descending, then key."""
        if not query.strip():
            return []
        return self._rows.top(query, k, threshold, exclude=exclude)
