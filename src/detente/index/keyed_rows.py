"""What both row stores of :class:`~detente.index.nearest.NearestTexts` keep alike: keyed
texts in numbered rows, freed rows reused, under one lock.

:class:`~detente.index.nearest_terms.TermRows` (lexical, pure Python) and
:class:`~detente.index.nearest_vectors.VectorRows` (semantic, numpy) add what each
scores with: term counts and postings, or unit vectors.
"""

from __future__ import annotations

import threading

__all__ = ["KeyedRows"]


class KeyedRows:
    """Keyed texts in rows: ``key -> row``, each row's key and text, the free rows."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._row: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._texts: list[str] = []
        self._free: list[int] = []

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, key: object) -> bool:
        return key in self._row

    def text(self, key: str) -> str | None:
        """The text kept for ``key`` (None: none)."""
        row = self._row.get(key)
        return self._texts[row] if row is not None else None
