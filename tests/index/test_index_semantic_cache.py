"""More texts than the embedding cache holds still embed, each to its own vector."""

from __future__ import annotations

import pytest

from detente.index import semantic

from semantic_support import require_model


def test_embedding_more_texts_than_the_cache_holds_answers_every_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sim = require_model()
    monkeypatch.setattr(semantic, "_CACHE", 3)
    texts = [f"claim objective number {i}" for i in range(8)]

    vectors = sim.embed(texts)
    again = sim.embed(texts[:2])

    assert vectors.shape == (8, 384)
    assert (again == vectors[:2]).all()
    assert len(sim._cache) <= 3
