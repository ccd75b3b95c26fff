"""Each objective is embedded once: a new claim's comparison embeds only its own text."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from detente.index.semantic import Similarity
from detente.service.search import semantic_record

from semantic_support import require_model


class _Counting:
    """Counts the texts the real model embeds (it still embeds them)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> Any:
        self.texts += texts
        return self.model.embed(texts)


def test_comparing_a_new_objective_with_many_holders_embeds_only_the_new_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_model()
    sim = Similarity()  # its own cache
    holders = [(f"clm_{i}", f"holder objective number {i} for the cache") for i in range(300)]
    sim.embed([text for _, text in holders])
    counting = _Counting(sim._model)
    monkeypatch.setattr(sim, "_model", counting)

    record = semantic_record(sim, "the holder objective number 7 for caching", holders)

    assert counting.texts == ["the holder objective number 7 for caching"]
    assert record is not None and "clm_7" in {s["claimId"] for s in record["similar"]}


def test_more_holders_than_the_old_4096_text_cache_still_embed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_model()
    monkeypatch.setenv("DETENTE_EMBED_CACHE", "50")
    sim = Similarity()
    holders = [(f"clm_{i}", f"objective {i}") for i in range(40)]
    semantic_record(sim, "objective a", holders)
    counting = _Counting(sim._model)
    monkeypatch.setattr(sim, "_model", counting)

    semantic_record(sim, "objective b", holders)

    assert counting.texts == ["objective b"]
    assert len(sim._cache) <= 50


def test_the_background_load_embeds_the_holders_before_the_semantic_mode_answers() -> None:
    require_model()
    script = (
        "from detente.service import search\n"
        "texts = ['first holding objective', 'second holding objective']\n"
        "print(search.similarity_now(lambda: texts).mode)\n"
        "search._WARMING[0].join(120)\n"
        "sim = search.similarity_now()\n"
        "calls = []\n"
        "real = sim._model.embed\n"
        "sim._model.embed = lambda t: (calls.append(list(t)), real(t))[1]\n"
        "sim.embed(texts + ['a new objective'])\n"
        "print(sim.mode, calls)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=180
    )
    first, second = out.stdout.strip().splitlines()
    assert first == "lexical"
    assert second == "semantic [['a new objective']]"
