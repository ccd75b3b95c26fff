"""Symbols a claim touches, two intents reconciled, search (API.md "Also in v1")."""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from detente.operations.wire.claims import Overlap
from detente.operations.wire.record import Json, record

__all__ = [
    "ClaimSymbols",
    "IntentSide",
    "IntentsReconciled",
    "SearchHit",
    "SearchOut",
    "Similarity",
    "TouchedFile",
]


@record
class TouchedFile(TypedDict):
    """A changed file and the symbols the change touches (``outsideSymbols``: lines
    outside any symbol changed too)."""

    path: str
    oldPath: str | None
    symbols: list[str]
    outsideSymbols: bool


@record
class ClaimSymbols(TypedDict):
    """What a claim's worktree (or branch) touches now, mapped onto symbols."""

    claimId: str
    base: str
    head: str | None
    worktree: str | None
    files: list[TouchedFile]
    symbols: list[str]
    outsideScope: list[str]


@record
class IntentSide(TypedDict):
    """One side of a reconciliation: where its change came from and what it touches."""

    label: str
    source: str
    claimId: str | None
    commit: str
    roughChangeKind: str | None
    files: list[str]
    symbols: list[str]
    truncated: bool


@record
class IntentsReconciled(TypedDict):
    """Where two intents meet: ``shared`` targets, the bounded references between them
    (``blastRadius``, ``interactions``) and the suggested ``next`` step."""

    overlap: bool
    shared: list[dict[str, Json]]
    a: IntentSide
    b: IntentSide
    blastRadius: dict[str, Json]
    interactions: list[dict[str, Json]]
    next: str


@record
class Similarity(TypedDict):
    """How results were ranked: ``semantic`` (the int8 MiniLM model) or ``lexical``
    (BM25, with the ``fallbackReason``)."""

    mode: Literal["semantic", "lexical"]
    model: str
    threshold: float
    fallbackReason: str | None


@record
class SearchHit(TypedDict):
    """A claim (``type: claim``, with its symbolic ``overlaps``) or a memory section
    (``type: memory``, with ``path``, ``section`` and ``title``) and its ``score``."""

    type: Literal["claim", "memory"]
    text: str
    score: float
    repo: NotRequired[str]
    path: NotRequired[str]
    section: NotRequired[str]
    title: NotRequired[str]
    claimId: NotRequired[str]
    status: NotRequired[str]
    agent: NotRequired[str]
    overlaps: NotRequired[list[Overlap]]


@record
class SearchOut(TypedDict):
    """``{query, similarity, results[]}``, best first."""

    query: str
    similarity: Similarity
    results: list[SearchHit]
