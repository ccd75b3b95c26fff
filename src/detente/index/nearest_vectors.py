"""The semantic rows of :class:`~detente.index.nearest.NearestTexts` (numpy).

The unit vectors in one contiguous ``float32`` matrix (a row per text, freed rows reused,
capacity grown by half when full); a query's scores are one matrix-vector product
(:func:`~detente.index.semantic.cosines`), the cosine of unit vectors: the same floats as
:meth:`Similarity.pairwise <detente.index.semantic.Similarity.pairwise>`.

Top-k selection: the scores at or above the threshold, then ``numpy.argpartition`` for
the ``k``-th best when more qualify, keeping every key tied with it so the order by key
decides ties exactly as a full sort would.

Imported only in the semantic mode: numpy comes with the ``semantic`` extra, and the
lexical mode (the default install) never needs it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from detente.index.keyed_rows import KeyedRows
from detente.index.semantic import Similarity, cosines

__all__ = ["VectorRows"]

_DIMENSIONS = 384
_START = 64
#: Texts embedded (or read from the caches) together when many are put at once.
_EMBED_CHUNK = 1000


class VectorRows(KeyedRows):
    """Keyed texts as unit vectors, and their top-k query by cosine. Thread-safe.

    Args:
        sim: a semantic-mode similarity (its embedding cache makes a text embedded once
            per process).
    """

    def __init__(self, sim: Similarity) -> None:
        self.sim = sim
        super().__init__()
        self._alive = np.zeros(0, dtype=bool)
        self._matrix = np.zeros((0, _DIMENSIONS), dtype=np.float32)

    def update(self, put: Iterable[tuple[str, str]], drop: Iterable[str]) -> None:
        """Forget the keys in ``drop`` (and the blank texts of ``put``), then keep (or
        replace) each ``(key, text)`` of ``put``, the new texts embedded together."""
        given = list(put)
        items = [(k, t) for k, t in given if t.strip()]
        blank = [k for k, t in given if not t.strip()]
        vectors = self._vectors([t for _, t in items]) if items else None
        with self._lock:
            for key in [*drop, *blank, *(k for k, _ in items)]:
                self._drop(key)
            self._grow(len(self._keys) + max(0, len(items) - len(self._free)))
            for i, (key, text) in enumerate(items):
                assert vectors is not None
                self._put(key, text, vectors[i])

    def _vectors(self, texts: list[str]) -> Any:
        """The vectors of ``texts`` as float16, embedded :data:`_EMBED_CHUNK` at a time.

        :meth:`Similarity.embed <detente.index.semantic.Similarity.embed>` gives float32
        copies of float16 vectors, so the float16 rows put into the float32 matrix are
        the same numbers; held as float16, the vectors of 10,000 holders take 7.7 MB
        instead of 15 MB, beside a float32 copy of one chunk at a time.
        """
        out = np.empty((len(texts), _DIMENSIONS), dtype=np.float16)
        for start in range(0, len(texts), _EMBED_CHUNK):
            part = self.sim.embed(texts[start : start + _EMBED_CHUNK])
            out[start : start + len(part)] = part
        return out

    def top(
        self, query: str, k: int, threshold: float, *, exclude: str | None = None
    ) -> list[tuple[float, str]]:
        """The ``k`` texts most similar to ``query`` at or above ``threshold``, but
        ``exclude``: ``[(score, key)]`` by score descending, then key."""
        probe = self.sim.embed([query])[0]
        with self._lock:
            size = len(self._keys)
            # float32 products, as Similarity.pairwise; compared in float64 like its floats
            scores = cosines(self._matrix[:size], probe).astype(np.float64)
            scores = np.where(self._alive[:size], scores, -np.inf)
            if exclude is not None and exclude in self._row:
                scores[self._row[exclude]] = -np.inf
            rows = np.flatnonzero(scores >= threshold)
            if len(rows) > k:
                # the k-th best score; every row tied with it stays, the key decides
                kth = -np.partition(-scores[rows], k - 1)[k - 1]
                rows = rows[scores[rows] >= kth]
            keys = self._keys
            found = [(float(scores[r]), str(keys[r])) for r in rows.tolist()]
        return sorted(found, key=lambda p: (-p[0], p[1]))[:k]

    def _put(self, key: str, text: str, vector: Any) -> None:
        if self._free:
            row = self._free.pop()
        else:
            row = len(self._keys)
            self._grow(row + 1)
            self._keys.append(None)
            self._texts.append("")
        self._row[key] = row
        self._keys[row] = key
        self._texts[row] = text
        self._alive[row] = True
        self._matrix[row] = vector

    def _drop(self, key: str) -> None:
        row = self._row.pop(key, None)
        if row is None:
            return
        self._keys[row] = None
        self._texts[row] = ""
        self._alive[row] = False
        self._matrix[row] = 0.0
        self._free.append(row)

    def _grow(self, size: int) -> None:
        capacity = len(self._alive)
        if size <= capacity:
            return
        capacity = max(_START, capacity + capacity // 2, size)  # by half: less slack than doubling
        alive = np.zeros(capacity, dtype=bool)
        alive[: len(self._alive)] = self._alive
        self._alive = alive
        matrix = np.zeros((capacity, _DIMENSIONS), dtype=np.float32)
        matrix[: len(self._matrix)] = self._matrix
        self._matrix = matrix
