"""Lexical similarity of short texts: stemmed terms weighted by BM25 (pure Python).

What the lexical mode of :class:`~detente.index.semantic.Similarity` runs when the model
is not installed (the default install has no numpy, onnxruntime or tokenizers), so this
module imports nothing beyond the standard library and (on the first stem) ``snowballstemmer``.

Terms: the alphanumeric runs of a text, split again at camelCase boundaries
(``RetryPolicy`` is ``retry policy``), lower-cased and stemmed with the Snowball English
stemmer (Porter 2001, "Snowball: A language for stemming algorithms"; the
``snowballstemmer`` package Sphinx uses), so *retry*, *retries*, *retrying* and
*retried* are the one term ``retri``.

Ranking (``detente search``): Okapi BM25 of each searched document for the query
(Robertson and Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond";
k1 = 1.2, b = 0.75), the corpus being the documents searched.

Pairs (the similar holders of a claim's objective): the cosine of BM25-weighted term
vectors. A term ``t`` that occurs ``tf`` times in a text weighs

    idf(t) * tf * (k1 + 1) / (tf + k1)       (k1 = 1.2)

BM25's term-frequency saturation with ``b = 0`` (the cosine already divides by the text's
length), and ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))`` (BM25's IDF in its
always-positive form) over a *corpus*: the ``N`` texts compared against, ``df`` of which
contain ``t``. For a claim's objective the corpus is the repository's live holders it is
compared with (the claim itself left out when its own objective changes): a word every
holder uses ("fix", "the") weighs little, a word few use ("idempotent") much. The score is
symmetric in the two texts, in [0, 1], and 1 for texts with the same terms in the same
proportions.

Exactness: every weight is a function of ``(N, df, tf)`` alone and every sum is
:func:`math.fsum` (correctly rounded, so independent of the order of its terms); the
holders' index (:mod:`detente.index.nearest_terms`) and a comparison with every holder
(:meth:`Similarity.pairwise <detente.index.semantic.Similarity.pairwise>`) call the same
:func:`cosine` on the same weights and get the same floats.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "K1",
    "B",
    "Corpus",
    "bm25_scores",
    "cosine",
    "idf",
    "norm",
    "stem",
    "terms",
    "weights",
]

#: BM25's term-frequency saturation (Robertson and Zaragoza 2009 suggest 1.2 to 2.0).
K1 = 1.2
#: BM25's length normalization in the ranking (0: none, 1: full).
B = 0.75

# An alphanumeric run, cut before an upper-case letter that starts a lower-case word
# (``HTTPClient`` -> ``HTTP`` ``Client``) and between letters and digits.
_TOKEN = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STEM_LOCK = threading.Lock()  # a Snowball stemmer keeps its word in itself while it works
_STEMMER: list[Any] = []  # built on the first stem (detente.index.english_stem: the English
# stemmer alone, about 1 ms), which the commands that never compare texts skip


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case ``word`` (``retries`` -> ``retri``)."""
    with _STEM_LOCK:
        if not _STEMMER:
            from detente.index.english_stem import english_stemmer

            _STEMMER.append(english_stemmer())
        return str(_STEMMER[0].stemWord(word))


def terms(text: str) -> list[str]:
    """The stemmed, lower-cased terms of ``text``, in order (see the module docstring)."""
    return [stem(token.lower()) for token in _TOKEN.findall(text)]


def idf(n: int, df: int) -> float:
    """BM25's IDF of a term found in ``df`` of ``n`` texts: ``ln(1 + (n - df + 0.5) /
    (df + 0.5))``, always positive (``0 <= df <= n``)."""
    return _idf(n, df)


@functools.lru_cache(maxsize=65_536)
def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _saturation(tf: int) -> float:
    return tf * (K1 + 1.0) / (tf + K1)


def weights(counts: Mapping[str, int], term_idf: Callable[[str], float]) -> dict[str, float]:
    """The BM25 weight of each term of a text: ``{term: idf(term) * tf(k1+1)/(tf+k1)}``.

    Args:
        counts: the text's term counts (``Counter(terms(text))``).
        term_idf: the IDF of a term in the corpus compared against.
    """
    return {term: term_idf(term) * _saturation(tf) for term, tf in counts.items()}


def norm(weighted: Mapping[str, float]) -> float:
    """The Euclidean norm of a weighted term vector (a correctly rounded sum)."""
    return math.sqrt(math.fsum(w * w for w in weighted.values()))


def cosine(
    left: Mapping[str, float], left_norm: float, right: Mapping[str, float], right_norm: float
) -> float:
    """The cosine of two weighted term vectors given their norms (0.0 when they share no
    term); symmetric, and the same float whatever the order of the mappings."""
    small, large = (left, right) if len(left) <= len(right) else (right, left)
    dot = math.fsum(w * large[t] for t, w in small.items() if t in large)
    if not dot:
        return 0.0
    return dot / (left_norm * right_norm)


class Corpus:
    """The document frequencies of a set of texts (the texts compared against).

    Args:
        texts: the corpus's texts as term counts (each a ``Counter(terms(text))``).
    """

    def __init__(self, texts: Iterable[Mapping[str, int]]) -> None:
        self.size = 0
        self.frequency: Counter[str] = Counter()
        for counts in texts:
            self.size += 1
            self.frequency.update(counts.keys())

    def idf(self, term: str) -> float:
        """The term's IDF in this corpus (:func:`idf`)."""
        return idf(self.size, self.frequency.get(term, 0))


def bm25_scores(
    query: str, documents: Sequence[str], *, k1: float = K1, b: float = B
) -> list[float]:
    """Okapi BM25 score of each document for ``query`` over ``documents`` as the corpus
    (stemmed terms; see the module docstring); 0.0 for a document sharing no term."""
    docs = [terms(d) for d in documents]
    n = len(docs)
    average = sum(len(d) for d in docs) / n if n else 0.0
    frequency: Counter[str] = Counter()
    for doc in docs:
        frequency.update(set(doc))
    asked = terms(query)
    scores = []
    for doc in docs:
        counts = Counter(doc)
        score = 0.0
        for term in asked:
            tf = counts.get(term, 0)
            if not tf:
                continue
            weight = idf(n, frequency[term])
            score += weight * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / (average or 1)))
        scores.append(score)
    return scores
