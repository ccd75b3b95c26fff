"""Offline semantic similarity with the real int8 MiniLM model, and the BM25 fallback.

Assertions are on rankings and on the calibrated threshold, never on raw floats.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from detente.index.semantic import THRESHOLDS, Similarity, bm25_scores, embed_threads

from semantic_support import require_model

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "ansible-commits.jsonl"
DOCS = [
    "Update the inventory plugin documentation",
    "Exponential backoff and retry policy for settlement calls",
    "Bump the version to 2.17 for the release",
    "Add a dark theme to the dashboard",
]


@pytest.fixture(scope="module")
def semantic() -> Similarity:
    return require_model()


def test_the_model_package_loads_after_its_file_hashes_are_checked(semantic: Similarity) -> None:
    described = semantic.describe()
    assert described["mode"] == "semantic"
    assert described["threshold"] == THRESHOLDS["semantic"]
    assert described["fallbackReason"] is None


def test_a_query_ranks_the_document_that_means_it_first_without_sharing_words(
    semantic: Similarity,
) -> None:
    scores = semantic.rank("retry behaviour when a call fails", DOCS)
    assert max(range(len(DOCS)), key=scores.__getitem__) == 1
    scores = semantic.rank("colour scheme of the web UI", DOCS)
    assert max(range(len(DOCS)), key=scores.__getitem__) == 3


def test_paraphrased_objectives_clear_the_calibrated_threshold_and_unrelated_ones_do_not(
    semantic: Similarity,
) -> None:
    [[same, other]] = semantic.pairwise(
        ["Make the HTTP client retry failed requests with backoff"],
        [
            "Add retries with exponential backoff to the API client",
            "Translate the installation guide into German",
        ],
    )
    assert same >= semantic.threshold > other


@pytest.mark.skipif(not DATA.exists(), reason="shared data set not present")
def test_the_threshold_predicts_shared_files_on_held_out_real_commits(
    semantic: Similarity,
) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from semantic import evaluate, labelled_pairs

    pairs = labelled_pairs(DATA, 80, seed=11)  # another sample than the calibration run
    scores = [semantic.pairwise([a], [b])[0][0] for a, b, _ in pairs]
    precision, recall = evaluate(scores, [y for *_, y in pairs], semantic.threshold)
    assert precision >= 0.7  # base rate is 0.5: the threshold carries real signal
    assert recall >= 0.15


def test_without_the_model_the_lexical_mode_ranks_with_bm25_and_says_so() -> None:
    lexical = Similarity("lexical")
    assert lexical.describe()["mode"] == "lexical"
    assert lexical.describe()["fallbackReason"] == "lexical mode requested"
    scores = lexical.rank("retry policy", DOCS)
    assert max(range(len(DOCS)), key=scores.__getitem__) == 1
    assert lexical.rank("retry behaviour when a call fails", DOCS)[0] == 0


def test_bm25_prefers_rare_terms_and_shorter_documents() -> None:
    docs = ["the retry", "the the the the", "the retry and many other words in here"]
    scores = bm25_scores("the retry", docs)
    assert scores[0] > scores[2] > scores[1]


def test_a_text_embeds_the_same_alone_or_padded_in_a_batch_of_longer_ones() -> None:
    require_model()
    fresh = Similarity()  # its own cache: nothing embedded yet
    short = "Fix a typo"
    batch = fresh.embed([DOCS[1] * 3, short, DOCS[0]])
    alone = Similarity().embed([short])
    assert np.allclose(batch[1], alone[0], atol=1e-4)
    again = fresh.embed([short, short])
    assert np.array_equal(again[0], batch[1]) and np.array_equal(again[1], batch[1])


def test_the_embedding_threads_come_from_the_environment_or_at_most_two_cores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DETENTE_EMBED_THREADS", "3")
    assert embed_threads() == 3
    monkeypatch.setenv("DETENTE_EMBED_THREADS", "zero")
    assert 1 <= embed_threads() <= 2
