"""Semantic overlaps and search over claims and memory sections.

Semantic overlap (DESIGN principle 5: similarity only warns): two holding claims whose
objectives are at least as similar as the calibrated threshold
(:data:`detente.index.semantic.THRESHOLDS`) get an overlap of ``kind: semantic,
severity: advisory`` ("different files, same subsystem"), listed beside the symbolic
ones and never blocking; a pair that already overlaps symbolically gets none.

Search (``GET /v1/search?q=``): holding claims (objective, paths, modules, symbols,
contract areas, test names) and the sections of registered memory documents (title and
body, read from the working tree) ranked by relevance to ``q``; each claim comes with its
symbolic overlaps. The ``similarity`` block of every answer states the mode
(``semantic`` or ``lexical``).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from detente.clock import parse_time
from detente.domain.claims.model import Claim
from detente.domain.events import CLAIM_ANNOUNCED, Event
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.model import (
    Overlap,
    OverlapKind,
    OverlapTarget,
    Severity,
    overlap_to_wire,
)
from detente.domain.state import RepoState
from detente.errors import DetenteError, ValidationError
from detente.index.semantic import Similarity, model_tried
from detente.service.core import ServiceCore

__all__ = [
    "SearchService",
    "announce_semantic",
    "semantic_overlaps",
    "semantic_record",
    "similar_record",
    "similarity",
    "similarity_now",
]

_SIMILARITY: list[Similarity] = []
_LOCK = threading.Lock()
_MAX_SECTION = 2000

#: The most similar claims a claim's record keeps: advice names a few, never a crowd.
MAX_SIMILAR = 10


def similarity() -> Similarity:
    """The process-wide similarity (the model loads once).

    ``DETENTE_SIMILARITY=lexical`` forces the BM25 mode (no model is loaded).
    """
    with _LOCK:
        if not _SIMILARITY:
            forced = os.environ.get("DETENTE_SIMILARITY", "").strip().lower()
            _SIMILARITY.append(Similarity("lexical" if forced == "lexical" else None))
        return _SIMILARITY[0]


_LEXICAL: list[Similarity] = []
_WARMING: list[threading.Thread] = []
_WARM_LOCK = threading.Lock()  # not _LOCK: similarity() holds that while the model loads
_READY = threading.Event()  # set when the background load (and its prefetch) is done


#: ``0`` in a short-lived process (set by the CLI for its one-shot commands): never start
#: the background model load; similarity answers in the lexical mode.
BACKGROUND_LOAD_ENV = "DETENTE_BACKGROUND_MODEL"
_STOP = threading.Event()  # set at exit: the background prefetch stops between chunks
_PREFETCH_CHUNK = 64


def _finish_warming() -> None:
    """At exit, stop the background prefetch and let a model load in progress finish
    (bounded, 30 s): a daemon thread left inside onnxruntime while the interpreter
    finalises aborts the process ("terminate called without an active exception", exit
    134), e.g. when ``detente mcp`` ends right after its first claim."""
    _STOP.set()
    for thread in list(_WARMING):
        thread.join(timeout=30.0)


atexit.register(_finish_warming)


def similarity_now(prefetch: Callable[[], list[str]] | None = None) -> Similarity:
    """The process-wide similarity when it is ready, without waiting for the model.

    While the model has not been loaded yet (the first claim after a server start), it
    loads in a background thread and this answers with the lexical mode, so no claim
    opening waits for a model load; a record states the mode it was computed in.

    Args:
        prefetch: the texts to embed in that background thread once the model has loaded
            (the holding claims' objectives), before the semantic mode is answered: the
            first semantic opening then embeds only its own objective.
    """
    if _SIMILARITY and (not _WARMING or _READY.is_set()):
        return _SIMILARITY[0]
    forced = os.environ.get("DETENTE_SIMILARITY", "").strip().lower() == "lexical"
    if not _WARMING and (model_tried() or forced):
        return similarity()
    if not _WARMING and os.environ.get(BACKGROUND_LOAD_ENV, "1") == "0":
        # A short-lived process (one CLI command): a model it would never use in time
        # is not loaded, and its exit does not wait for one.
        if not _LEXICAL:
            _LEXICAL.append(Similarity("lexical"))
        return _LEXICAL[0]
    with _WARM_LOCK:
        if not _WARMING:
            _WARMING.append(
                threading.Thread(target=_warm, args=(prefetch,), name="detente-model", daemon=True)
            )
            _WARMING[0].start()
        if not _LEXICAL:
            _LEXICAL.append(Similarity("lexical"))
        return _LEXICAL[0]


def _warm(prefetch: Callable[[], list[str]] | None) -> None:
    try:
        sim = similarity()
        if sim.mode == "semantic" and prefetch is not None and not _STOP.is_set():
            try:
                texts = [t for t in prefetch() if t.strip()]
            except Exception:  # the process is shutting down (its store closed): no warm-up
                return
            for start in range(0, len(texts), _PREFETCH_CHUNK):
                if _STOP.is_set():
                    break
                sim.embed(texts[start : start + _PREFETCH_CHUNK])
    finally:
        _READY.set()


def semantic_record(
    sim: Similarity,
    objective: str,
    candidates: Sequence[tuple[str, str]],
    *,
    at: str | None = None,
) -> dict[str, Any] | None:
    """What a new claim's objective resembles, computed once when it opens.

    Args:
        sim: the similarity to use.
        objective: the new claim's objective.
        candidates: ``(claim id, objective)`` of the holding claims.
        at: when it is computed for a changed objective (stored as ``at``; a record
            without it dates from its claim's opening).

    Returns:
        ``{mode, threshold, similar: [{claimId, score}]}`` (and ``at``): the
        :data:`MAX_SIMILAR` most similar holders at or above the mode's threshold
        (scores rounded to 4 places, listed by claim id), stored on ``claim.announced``
        (or ``claim.objective_changed``); None for a blank objective.
    """
    if not objective.strip():
        return None
    others = [(cid, text) for cid, text in candidates if text.strip()]
    scores = sim.pairwise([objective], [text for _, text in others])[0] if others else []
    above = [(score, cid) for (cid, _), score in zip(others, scores, strict=True)]
    best = sorted((p for p in above if p[0] >= sim.threshold), key=lambda p: (-p[0], p[1]))
    return similar_record(sim, best[:MAX_SIMILAR], at=at)


def similar_record(
    sim: Similarity, best: Sequence[tuple[float, str]], *, at: str | None = None
) -> dict[str, Any]:
    """The stored record of the similar holders ``best`` (``[(score, claim id)]``, at most
    :data:`MAX_SIMILAR`, at or above the threshold): ``{mode, threshold, similar:
    [{claimId, score}]}`` (and ``at``), scores rounded to 4 places, listed by claim id."""
    similar = [
        {"claimId": cid, "score": round(score, 4)}
        for score, cid in sorted(best, key=lambda p: p[1])
    ]
    record: dict[str, Any] = {"mode": sim.mode, "threshold": sim.threshold, "similar": similar}
    if at is not None:
        record["at"] = at
    return record


def announce_semantic(
    state: RepoState,
    events: list[Event],
    claim_id: str,
    record: dict[str, Any] | None,
    event_type: str = CLAIM_ANNOUNCED,
) -> list[Event]:
    """``events`` with ``record`` stored on ``claim_id``'s ``claim.announced`` (or another
    ``event_type``: ``claim.objective_changed``), keeping only the similar claims that still
    hold in ``state`` (the record was computed outside the repository's transaction)."""
    if record is None:
        return events
    kept = [
        s
        for s in record["similar"]
        if (c := state.claims.get(s["claimId"])) is not None and c.holding and c.id != claim_id
    ]
    out = []
    for event in events:
        if event.type == event_type and event.data.get("claimId") == claim_id:
            event = replace(event, data={**event.data, "semantic": {**record, "similar": kept}})
        out.append(event)
    return out


def semantic_overlaps(state: RepoState, claim: Claim, symbolic: list[Overlap]) -> list[Overlap]:
    """Advisory overlaps of ``claim`` with holders whose objective means the same.

    Read from the records stored when claims opened (:func:`semantic_record`), in both
    directions: the claims ``claim`` found similar when it opened, and the later claims
    that found ``claim`` similar (the fold's reverse lookup, ``lookups.similar_to``: no
    walk over the claims). Nothing is recomputed on a read.

    Returns:
        One ``semantic``/``advisory`` :class:`Overlap` per similar holder that has no
        symbolic overlap with ``claim``, by claim id.
    """
    already = {o.claim_id for o in symbolic}
    found: dict[str, tuple[float, str, float]] = {}
    record = claim.semantic
    mine = _record_time(claim)
    for similar_id, score in record.similar if record is not None else ():
        held = state.claims.get(similar_id)
        if held is not None and _record_time(held) > mine:
            continue  # its objective changed since: its own newer record judges the pair
        found[similar_id] = (score, record.mode, record.threshold)  # type: ignore[union-attr]
    for other_id in state.claims.lookups.similar_to.get(claim.id, ()):
        other = state.claims[other_id]
        theirs = other.semantic
        if theirs is None or _record_time(other) < mine:
            continue  # computed against this claim's earlier objective
        for similar_id, score in theirs.similar:
            if similar_id == claim.id:
                found.setdefault(other.id, (score, theirs.mode, theirs.threshold))
    out = []
    for other_id in sorted(found):
        held = state.claims.get(other_id)
        if held is None or not held.holding or held.id == claim.id or held.id in already:
            continue
        other = held
        score, mode, threshold = found[other_id]
        out.append(
            Overlap(
                claim_id=other.id,
                agent=other.agent,
                kind=OverlapKind.SEMANTIC,
                severity=Severity.ADVISORY,
                targets=(
                    OverlapTarget(
                        mine=claim.objective,
                        theirs=other.objective,
                        witness=f"{mode} similarity {score:.2f}",
                    ),
                ),
                reason=(
                    f"similar objective ({other.agent.name}: {other.objective!r}; {mode} "
                    f"similarity {score:.2f} >= {threshold:.2f}): different files, maybe "
                    "the same subsystem; advice only"
                ),
                kinds=(OverlapKind.SEMANTIC,),
                their_status=other.status,
            )
        )
    return out


def _record_time(claim: Claim) -> datetime:
    """When ``claim``'s semantic record was computed: at its opening, or ``at`` when its
    objective changed (a record older than the other claim's objective is stale)."""
    raw = claim.semantic.at if claim.semantic is not None else None
    return parse_time(raw) if raw else claim.created_at


class SearchService:
    """``search``: claims and memory sections ranked by relevance."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def search(self, q: str, *, repo: str | None = None, limit: int = 20) -> dict[str, Any]:
        """Rank claims and memory sections for ``q`` (API ``GET /v1/search``).

        Args:
            q: the query, 1 to 1000 characters.
            repo: one repository (default: every one served).
            limit: the most results, 1 to 100.

        Returns:
            ``{query, similarity{mode, model, threshold, fallbackReason}, results[]}``;
            a result is ``{type: claim, claimId, score, text, status, overlaps[]}`` or
            ``{type: memory, path, section, title, score, text}``, best first; only
            positive scores (a negative cosine is no relation, not a weak one).

        Raises:
            ValidationError: ``validation_error`` on an empty query, a bad limit or an
                unknown repository.
        """
        query = q.strip()
        if not query or len(query) > 1000:
            raise ValidationError("q must be 1 to 1000 characters", field="q")
        if not 1 <= limit <= 100:
            raise ValidationError("limit must be between 1 and 100", field="limit")
        names = [self.core.repo(repo).name] if repo else sorted(self.core.repos)
        sim = similarity()
        docs: list[tuple[str, dict[str, Any]]] = []
        for name in names:
            state = self.core.fresh(name)
            with self.core.lock(name):
                for claim in sorted(state.claims.values(), key=lambda c: c.id):
                    if claim.holding:
                        docs.append((_claim_text(claim), _claim_hit(state, claim)))
                root = self.core.repos[name].path
                for document in sorted(state.memory.documents.values(), key=lambda d: d.path):
                    docs.extend(_sections(root, document.path))
        scores = sim.rank(query, [text for text, _ in docs])
        ranked = sorted(zip(scores, range(len(docs)), strict=True), key=lambda p: (-p[0], p[1]))
        results = []
        for score, i in ranked[:limit]:
            if score <= 0:  # no shared term (BM25), or an unrelated meaning (cosine)
                break
            results.append({**docs[i][1], "score": round(score, 4)})
        return {"query": query, "similarity": sim.describe(), "results": results}


def _claim_text(claim: Claim) -> str:
    """What a search matches a claim on: its objective, scope (paths, modules, symbols),
    expected contract changes (area and change) and the tests it answers for."""
    contracts = [p for c in claim.expected_contract_changes for p in (c.area, c.change) if p]
    parts = [
        claim.objective,
        *claim.paths,
        *claim.modules,
        *claim.symbols,
        *contracts,
        *claim.test_responsibility,
    ]
    return " ".join(parts)


def _claim_hit(state: RepoState, claim: Claim) -> dict[str, Any]:
    overlaps = find_overlaps(state, Targets.of(claim), exclude=claim.id)
    return {
        "type": "claim",
        "repo": claim.repo,
        "claimId": claim.id,
        "status": claim.status.value,
        "agent": claim.agent.name,
        "text": claim.objective,
        "overlaps": [overlap_to_wire(o) for o in overlaps],
    }


def _sections(root: Path | None, path: str) -> list[tuple[str, dict[str, Any]]]:
    if root is None:
        return []
    from detente.domain.memory.markdown import parse  # (a search over sections only)

    try:
        data = (root / path).read_bytes()
        outline = parse(data, path=path)
    except (OSError, DetenteError):
        return []
    out = []
    for span in outline.sections:
        body = span.body(data).decode("utf-8", "replace").strip()[:_MAX_SECTION]
        out.append(
            (
                f"{span.title} {body}",
                {
                    "type": "memory",
                    "path": path,
                    "section": span.key,
                    "title": span.title,
                    "text": body[:200],
                },
            )
        )
    return out
