"""The lexical fallback (what a default install runs): stemmed terms weighted by BM25."""

from __future__ import annotations

from detente.index.lexical import Corpus, bm25_scores, cosine, idf, norm, terms, weights
from detente.index.nearest import NearestTexts
from detente.index.semantic import Similarity
from detente.service.search import MAX_SIMILAR


def test_retry_retries_retrying_and_retried_are_one_term() -> None:
    assert terms("retry retries retrying retried") == ["retri"] * 4
    assert terms("Tests: testing the test") == ["test", "test", "the", "test"]


def test_camel_case_and_snake_case_names_split_into_their_words() -> None:
    assert terms("RetryPolicy.HTTPClient") == ["retri", "polici", "http", "client"]
    assert terms("retry_policy v2") == ["retri", "polici", "v", "2"]


def test_a_rare_term_outweighs_a_common_one() -> None:
    holders = ["Fix the ledger", "Fix the docs", "Fix the tests", "Idempotent cache"]
    corpus = Corpus([{t: 1 for t in terms(h)} for h in holders])
    assert corpus.idf("idempot") > corpus.idf("fix") > 0
    assert idf(4, 0) > idf(4, 1) > idf(4, 3) > 0
    # Each holder shares one word with the query, one word in three of its own: a plain
    # term count ties them; BM25 weights the word one holder uses above "fix" and "the".
    [[common, _, _, rare]] = Similarity("lexical").pairwise(
        ["fix idempotent"], [*holders[:3], "Idempotent cache writes"]
    )
    assert rare > common > 0


def test_the_weighted_cosine_is_symmetric_and_one_for_the_same_terms() -> None:
    corpus = Corpus([{"retri": 2, "key": 1}, {"theme": 1}])
    a = weights({"retri": 2, "key": 1}, corpus.idf)
    b = weights({"retri": 1, "theme": 1}, corpus.idf)
    assert cosine(a, norm(a), b, norm(b)) == cosine(b, norm(b), a, norm(a)) > 0
    assert abs(cosine(a, norm(a), a, norm(a)) - 1.0) < 1e-12


def test_bm25_ranks_the_stemmed_match_and_leaves_out_the_unrelated() -> None:
    docs = ["Make settlement retries idempotent using a retry key", "Dark theme for the dashboard"]
    scores = bm25_scores("retrying payments", docs)
    assert scores[0] > 0 and scores[1] == 0


def test_the_index_weighs_terms_by_the_holders_it_keeps_as_comparing_every_holder_does() -> None:
    sim = Similarity("lexical")
    held = {
        "clm-a": "Make settlement retries idempotent using a retry key",
        "clm-b": "Fix the retry loop in the dashboard",
        "clm-c": "Fix the flaky settlement test",
        "clm-d": "Fix docs",
    }
    nearest = NearestTexts(sim)
    nearest.update(held.items(), [])
    for query, exclude in [
        ("Retrying settlement payments idempotently", None),
        ("Fix the retry", None),
        ("Fix the retry", "clm-b"),  # left out of the corpus too
    ]:
        others = sorted((k, t) for k, t in held.items() if k != exclude)
        scores = sim.pairwise([query], [t for _, t in others])[0]
        expected = sorted(
            ((s, k) for s, (k, _) in zip(scores, others, strict=True) if s >= 0.05),
            key=lambda p: (-p[0], p[1]),
        )
        assert nearest.top(query, MAX_SIMILAR, 0.05, exclude=exclude) == expected
        assert expected  # the premise: something reached the threshold
