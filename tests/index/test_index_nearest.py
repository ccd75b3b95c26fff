"""The top-k index of holders' objectives answers exactly what comparing every pair does.

The brute-force path is :func:`detente.service.search.semantic_record` over the same
texts (``Similarity.pairwise`` against each holder); the index path is
:class:`~detente.index.nearest.NearestTexts` through the same record formatting. Both run
on real commit subjects from the ansible history, in both modes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from detente.index import nearest_vectors
from detente.index.nearest import NearestTexts
from detente.index.semantic import Similarity
from detente.service.search import MAX_SIMILAR, semantic_record, similar_record

from semantic_support import require_model


def _data() -> Path:
    """``shared/data/ansible-commits.jsonl`` beside the checkout (the main one or any
    worktree of it); skipped where the data set is absent."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / "ansible-commits.jsonl"
        if candidate.is_file():
            return candidate
    pytest.skip("shared data set not present")


def _subjects(count: int) -> list[str]:
    out = []
    with _data().open(encoding="utf-8") as f:
        for line in f:
            out.append(str(json.loads(line)["subject"]))
            if len(out) == count:
                break
    return out


def _both(
    sim: Similarity, nearest: NearestTexts, held: dict[str, str], query: str
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    brute = semantic_record(sim, query, sorted(held.items()))
    fast = similar_record(sim, nearest.top(query, MAX_SIMILAR, sim.threshold))
    return brute, fast


def _check_sample(sim: Similarity, holders: int, queries: int) -> int:
    """Compare both paths after building, then after drops and replacements; returns how
    many queries had more candidates above the threshold than the record keeps."""
    subjects = _subjects(holders + queries)
    held = {f"clm-{i:04d}": text for i, text in enumerate(subjects[:holders])}
    asked = subjects[holders:]
    nearest = NearestTexts(sim)
    nearest.update(held.items(), [])
    crowded = 0
    for query in asked:
        brute, fast = _both(sim, nearest, held, query)
        assert fast == brute, query
        above = [s for s in sim.pairwise([query], list(held.values()))[0] if s >= sim.threshold]
        crowded += len(above) > MAX_SIMILAR
    # Claims close (every third) and change objectives (every fifth takes a query's text).
    gone = sorted(held)[::3]
    changed = {key: asked[i % len(asked)] for i, key in enumerate(sorted(held)[1::5])}
    nearest.update(changed.items(), gone)
    for key in gone:
        del held[key]
    held.update(changed)
    assert len(nearest) == len(held)
    for query in asked:
        brute, fast = _both(sim, nearest, held, query)
        assert fast == brute, query
    return crowded


def test_the_lexical_index_gives_the_same_advisories_as_comparing_every_holder() -> None:
    crowded = _check_sample(Similarity("lexical"), holders=600, queries=60)
    assert crowded > 0  # the top-k cut (and its ties) was exercised


def test_the_semantic_index_gives_the_same_advisories_as_comparing_every_holder() -> None:
    _check_sample(require_model(), holders=300, queries=30)


def test_holders_embedded_a_few_at_a_time_give_the_same_advisories(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sim = require_model()
    monkeypatch.setattr(nearest_vectors, "_EMBED_CHUNK", 7)  # 300 holders: 43 chunks
    _check_sample(sim, holders=300, queries=10)


def test_a_tie_at_the_cut_is_decided_by_key_as_a_full_sort_decides_it() -> None:
    sim = Similarity("lexical")
    nearest = NearestTexts(sim)
    held = {f"clm-{i:02d}": "retry the http client" for i in range(25)}
    nearest.update(reversed(list(held.items())), [])
    top = nearest.top("retry the http client", MAX_SIMILAR, sim.threshold)
    assert [key for _, key in top] == sorted(held)[:MAX_SIMILAR]
    assert top == [(pytest.approx(1.0), key) for key in sorted(held)[:MAX_SIMILAR]]


def test_blank_texts_and_the_excluded_key_are_never_similar() -> None:
    sim = Similarity("lexical")
    nearest = NearestTexts(sim)
    nearest.update([("a", "retry the http client"), ("b", "   "), ("c", "retry http")], [])
    assert "b" not in nearest
    found = nearest.top("retry the http client", MAX_SIMILAR, sim.threshold, exclude="a")
    assert [key for _, key in found] == ["c"]
    assert nearest.top("  ", MAX_SIMILAR, sim.threshold) == []


def test_a_dropped_row_is_reused_and_the_old_text_no_longer_scores() -> None:
    sim = Similarity("lexical")
    nearest = NearestTexts(sim)
    nearest.update([("a", "rotate signing keys"), ("b", "retry http client")], [])
    nearest.update([("c", "document dashboard theme")], ["a"])
    assert nearest.text("a") is None and nearest.text("c") == "document dashboard theme"
    assert nearest.top("rotate signing keys", MAX_SIMILAR, sim.threshold) == []
    assert [k for _, k in nearest.top("dashboard theme", 5, sim.threshold)] == ["c"]
