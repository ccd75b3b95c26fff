"""The texts most similar to a query among many, scored all at once.

:class:`NearestTexts` keeps keyed texts (the holding claims' objectives) in the form
their :class:`~detente.index.semantic.Similarity` compares them, updated one text at a
time, and scores a query against all of them in one pass:

- semantic mode: the unit vectors in one contiguous ``float32`` matrix (a row per text,
  freed rows reused, capacity grown by half when full); the scores are one matrix-vector
  product (:func:`~detente.index.semantic.cosines`), the cosine of unit vectors;
- lexical mode: the lower-cased word counts in an inverted index (term -> rows and
  counts, kept as arrays per term) and each row's squared norm; the scores are the
  cosine of term-count vectors, accumulated over the query's terms only.

The answers are those of :meth:`Similarity.pairwise
<detente.index.semantic.Similarity.pairwise>` over the same texts: the same vectors, the
same cosine (the lexical one exact: integer dot products and norms, then the same
square root and division), the same order (score, then key).

Top-k selection: the scores at or above the threshold, then ``numpy.argpartition`` for
the ``k``-th best when more qualify, keeping every key tied with it so the order by key
decides ties exactly as a full sort would.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np

from detente.index.semantic import Similarity, cosines, words

__all__ = ["NearestTexts"]

_DIMENSIONS = 384
_START = 64
#: Texts embedded (or read from the caches) together when many are put at once.
_EMBED_CHUNK = 1000


class NearestTexts:
    """Keyed texts and their top-k query (thread-safe; see the module docstring).

    Args:
        sim: the similarity whose mode and vectors are used (its embedding cache makes a
            text embedded once per process).
    """

    def __init__(self, sim: Similarity) -> None:
        self.sim = sim
        self._lock = threading.Lock()
        self._row: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._texts: list[str] = []
        self._free: list[int] = []
        self._alive = np.zeros(0, dtype=bool)
        # semantic: the unit vectors, a row per text
        self._matrix = np.zeros((0, _DIMENSIONS), dtype=np.float32)
        # lexical: term -> {row: count}, its arrays (built on demand), squared norms
        self._postings: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, tuple[Any, Any]] = {}
        self._counts: list[Counter[str] | None] = []
        self._norms = np.zeros(0, dtype=np.float64)

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def text(self, key: str) -> str | None:
        """The text kept for ``key`` (None: none)."""
        row = self._row.get(key)
        return self._texts[row] if row is not None else None

    def update(self, put: Iterable[tuple[str, str]], drop: Iterable[str]) -> None:
        """Forget the keys in ``drop``, then keep (or replace) each ``(key, text)`` of
        ``put``; a blank text is not kept (it is similar to nothing). In the semantic mode
        the new texts are embedded together, in one call."""
        given = list(put)
        items = [(k, t) for k, t in given if t.strip()]
        blank = [k for k, t in given if not t.strip()]
        vectors = None
        if self.sim.mode == "semantic" and items:
            vectors = self._vectors([t for _, t in items])
        with self._lock:
            for key in [*drop, *blank, *(k for k, _ in items)]:
                self._drop(key)
            self._grow(len(self._keys) + max(0, len(items) - len(self._free)))
            for i, (key, text) in enumerate(items):
                self._put(key, text, None if vectors is None else vectors[i])

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
        if not query.strip():
            return []
        semantic = self.sim.mode == "semantic"
        probe = self.sim.embed([query])[0] if semantic else Counter(words(query))
        with self._lock:
            scores = self._scores(probe)
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

    # ------------------------------------------------------------------ rows

    def _scores(self, probe: Any) -> Any:
        """The score of every row (dead rows: -inf)."""
        size = len(self._keys)
        if self.sim.mode == "semantic":
            # float32 products, as Similarity.pairwise; compared in float64 like its floats
            scores = cosines(self._matrix[:size], probe).astype(np.float64)
        else:
            dots = np.zeros(size, dtype=np.float64)
            for term, count in probe.items():
                arrays = self._term_arrays(term)
                if arrays is not None:
                    dots[arrays[0]] += count * arrays[1]
            square = float(sum(v * v for v in probe.values()))
            with np.errstate(divide="ignore", invalid="ignore"):
                scores = np.where(dots > 0, dots / np.sqrt(square * self._norms[:size]), 0.0)
        return np.where(self._alive[:size], scores, -np.inf)

    def _term_arrays(self, term: str) -> tuple[Any, Any] | None:
        arrays = self._arrays.get(term)
        if arrays is None:
            posting = self._postings.get(term)
            if not posting:
                return None
            rows = np.fromiter(posting.keys(), dtype=np.int64, count=len(posting))
            counts = np.fromiter(posting.values(), dtype=np.float64, count=len(posting))
            arrays = self._arrays[term] = (rows, counts)
        return arrays

    def _put(self, key: str, text: str, vector: Any) -> None:
        if self._free:
            row = self._free.pop()
        else:
            row = len(self._keys)
            self._grow(row + 1)
            self._keys.append(None)
            self._texts.append("")
            self._counts.append(None)
        self._row[key] = row
        self._keys[row] = key
        self._texts[row] = text
        self._alive[row] = True
        if vector is not None:
            self._matrix[row] = vector
        else:
            counts = Counter(words(text))
            self._counts[row] = counts
            self._norms[row] = math.fsum(v * v for v in counts.values())
            for term, count in counts.items():
                self._postings.setdefault(term, {})[row] = count
                self._arrays.pop(term, None)

    def _drop(self, key: str) -> None:
        row = self._row.pop(key, None)
        if row is None:
            return
        self._keys[row] = None
        self._texts[row] = ""
        self._alive[row] = False
        if self.sim.mode == "semantic":
            self._matrix[row] = 0.0
        counts = self._counts[row]
        if counts is not None:
            for term in counts:
                posting = self._postings.get(term)
                if posting is not None:
                    posting.pop(row, None)
                    if not posting:
                        del self._postings[term]
                self._arrays.pop(term, None)
            self._counts[row] = None
            self._norms[row] = 0.0
        self._free.append(row)

    def _grow(self, size: int) -> None:
        capacity = len(self._alive)
        if size <= capacity:
            return
        capacity = max(_START, capacity + capacity // 2, size)  # by half: less slack than doubling
        alive = np.zeros(capacity, dtype=bool)
        alive[: len(self._alive)] = self._alive
        self._alive = alive
        norms = np.zeros(capacity, dtype=np.float64)
        norms[: len(self._norms)] = self._norms
        self._norms = norms
        if self.sim.mode == "semantic":
            matrix = np.zeros((capacity, _DIMENSIONS), dtype=np.float32)
            matrix[: len(self._matrix)] = self._matrix
            self._matrix = matrix
