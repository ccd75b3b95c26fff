"""The holding claims' objectives of each repository, ready to be compared with a new one.

Opening a claim (and changing an objective) stores what the objective resembles among
the holders (:func:`detente.service.search.semantic_record`). Comparing it with every
holder's text one by one grew with the number of holders (at 3,000 live claims it was
most of an opening's time); :class:`HolderSimilarity` keeps, per repository and
similarity mode, a :class:`~detente.index.nearest.NearestTexts` of the holders'
objectives and scores a new objective against all of them in one pass.

The index follows the projection through the fold's journal of holding-objective changes
(:class:`~detente.domain.claims.lookups.ClaimLookups`): a sync reads only the claims
changed since the epoch it last saw; a projection it has not seen (the service restarted
it from a snapshot after a failed transaction) is read whole once.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from detente.domain.claims.evolve import ClaimBook
from detente.domain.state import RepoState
from detente.index.nearest import NearestTexts
from detente.index.semantic import Similarity
from detente.service.core import ServiceCore
from detente.service.search import MAX_SIMILAR, similar_record

__all__ = ["HolderSimilarity", "holder_similarity"]

_PER_CORE: weakref.WeakKeyDictionary[ServiceCore, HolderSimilarity] = weakref.WeakKeyDictionary()
_PER_CORE_LOCK = threading.Lock()


def holder_similarity(core: ServiceCore) -> HolderSimilarity:
    """The one :class:`HolderSimilarity` of ``core`` (the services built on a core hold
    nothing but the core; the index lives as long as the core)."""
    with _PER_CORE_LOCK:
        found = _PER_CORE.get(core)
        if found is None:
            found = _PER_CORE[core] = HolderSimilarity(core)
        return found


class _Synced:
    """One repository's holders in one similarity, and the journal position it reflects."""

    def __init__(self, sim: Similarity) -> None:
        self.sim = sim
        self.nearest = NearestTexts(sim)
        self.book: weakref.ref[ClaimBook] | None = None
        self.epoch = 0

    def changes(self, state: RepoState) -> tuple[list[tuple[str, str]], list[str], bool]:
        """``(put, drop, whole)`` to bring the index to ``state`` (hold the repo's lock):
        the holders to keep with their objective, the ids to forget, and whether the
        index must be rebuilt from ``put`` alone."""
        book = state.claims
        journal = book.lookups
        seen = self.book() if self.book is not None else None
        if seen is not book or journal.objective_epoch < self.epoch:
            return [(c.id, c.objective) for c in book.values() if c.holding], [], True
        put: list[tuple[str, str]] = []
        drop: list[str] = []
        for claim_id in journal.objective_changes_since(self.epoch):
            claim = book.get(claim_id)
            if claim is not None and claim.holding:
                if self.nearest.text(claim_id) != claim.objective:
                    put.append((claim_id, claim.objective))
            else:
                drop.append(claim_id)
        return put, drop, False

    def sync(self, state: RepoState) -> None:
        """Bring the index to ``state`` (hold the repo's lock)."""
        put, drop, whole = self.changes(state)
        if whole:
            self.nearest = NearestTexts(self.sim)
        if put or drop:
            self.nearest.update(put, drop)
        self.book = weakref.ref(state.claims)
        self.epoch = state.claims.lookups.objective_epoch


class HolderSimilarity:
    """Per repository and similarity mode, the holders' objectives (see the module
    docstring). Thread-safe."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core
        self._indexes: dict[tuple[str, str], _Synced] = {}
        self._lock = threading.Lock()

    def record(
        self,
        repo: str,
        sim: Similarity,
        objective: str,
        *,
        exclude: str | None = None,
        at: str | None = None,
    ) -> dict[str, Any] | None:
        """What ``objective`` resembles among ``repo``'s holders (but ``exclude``), as
        :func:`detente.service.search.semantic_record` computes it from every holder's
        text: ``{mode, threshold, similar: [{claimId, score}]}`` (and ``at``), or None
        for a blank objective.

        Computed outside the repository's transaction: the model (when a holder's or the
        objective's vector is not cached yet) runs without the repository's lock.

        Raises:
            ValidationError: ``repo`` is not served.
        """
        if not objective.strip():
            return None
        synced = self._synced(repo, sim)
        state = self.core.fresh(repo)
        with self.core.lock(repo):
            put, _, _ = synced.changes(state)
        if sim.mode == "semantic" and put:
            sim.embed([text for _, text in put if text.strip()])  # fills the cache, unlocked
        with self.core.lock(repo):
            current = self.core.current_state(repo)
            synced.sync(state if current is state else current)
            nearest = synced.nearest
        best = nearest.top(objective, MAX_SIMILAR, sim.threshold, exclude=exclude)
        return similar_record(sim, best, at=at)

    def _synced(self, repo: str, sim: Similarity) -> _Synced:
        key = (repo, sim.mode)
        with self._lock:
            synced = self._indexes.get(key)
            if synced is None or synced.sim is not sim:
                # A new mode (the model loaded) or similarity: the repository's other
                # indexes are not asked again (one rebuild if they are), so they go.
                for stale in [k for k in self._indexes if k[0] == repo]:
                    del self._indexes[stale]
                synced = self._indexes[key] = _Synced(sim)
            return synced
