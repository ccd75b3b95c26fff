"""Where a repository's projection starts from: the newest snapshot, never event 1.

:class:`Checkpoints` keeps, per repository, the newest snapshot this process took or
loaded (:mod:`detente.eventlog.snapshots`) and uses it three ways:

- **start**: a process's first look at a repository restores the store's snapshot (when
  the store keeps them, :class:`~detente.storage.base.SnapshotStore`, and it passes every
  check) and then folds only the log's tail;
- **retry**: a command that lost a race (``ConcurrencyError``) or failed after folding
  events that were never committed gets a *copy* of the state at the snapshot, and the
  next transaction folds the tail from there, instead of replaying from event 1;
- **save**: after a commit that leaves the state :attr:`~Checkpoints.every` events past
  the snapshot, and at a clean shutdown (:meth:`~Checkpoints.save_all`), a new snapshot
  is taken and written to the store. A failed write is logged and costs nothing but a
  longer replay later.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from detente.domain.state import RepoState
from detente.errors import StoreError
from detente.eventlog.snapshots import Snapshot, restore, take_snapshot, thaw
from detente.storage.base import SnapshotStore, Store

if TYPE_CHECKING:
    import logging

__all__ = ["SHORT_LIVED_TAIL", "SNAPSHOT_EVERY", "Checkpoints"]

#: Events folded past the last snapshot before the next one is taken.
SNAPSHOT_EVERY = 1000
#: Events a short-lived process (a CLI call in local mode) must have folded past the last
#: snapshot before its shutdown saves a new one (a server's shutdown saves any tail).
SHORT_LIVED_TAIL = 100


def _log() -> logging.Logger:
    """The store's logger (``logging`` is imported on the first warning: a read never
    warns, and importing it costs a one-shot CLI call more than its read)."""
    import logging

    return logging.getLogger("detente.storage")


#: ``repo -> an empty state for it`` (settings and tree source applied).
NewState = Callable[[str], RepoState]


class Checkpoints:
    """The snapshots of one service's repositories (see the module docstring).

    Args:
        store: the service's store (snapshots persist only if it is a ``SnapshotStore``).
        new_state: makes an empty state of a repository, settings applied.
        every: events between snapshots (>= 1).

    Call every method holding the repository's command lock.
    """

    def __init__(self, store: Store, new_state: NewState, *, every: int = SNAPSHOT_EVERY) -> None:
        self._store = store
        self._new_state = new_state
        self.every = max(1, every)
        self._held: dict[str, Snapshot] = {}
        self._mutex = threading.Lock()

    def start(self, repo: str) -> RepoState:
        """The repository's state from the store's snapshot if it is sound, else empty."""
        state = self._new_state(repo)
        if not isinstance(self._store, SnapshotStore):
            return state
        try:
            snapshot = self._store.load_snapshot(repo)
            if snapshot is None:
                return state
            named = self._store.read(since=snapshot.seq - 1, limit=1)
        except StoreError as exc:
            _log().warning("cannot read the projection snapshot of %s: %s", repo, exc)
            return state
        loaded = restore(
            snapshot,
            repo=repo,
            case_insensitive=state.case_insensitive,
            named=named[0] if named else None,
        )
        if loaded is None:
            return state
        loaded.trees = state.trees
        with self._mutex:
            self._held[repo] = snapshot
        return loaded

    def copy(self, repo: str) -> RepoState:
        """A fresh copy of the state at the newest snapshot (empty when there is none)."""
        with self._mutex:
            snapshot = self._held.get(repo)
        state = self._new_state(repo)
        if snapshot is None:
            return state
        copied = thaw(snapshot)
        if not isinstance(copied, RepoState):  # we pickled it ourselves: a bug if not
            raise TypeError("a held snapshot is not a RepoState")
        copied.trees = state.trees
        return copied

    def behind(self, state: RepoState) -> int:
        """Events folded into ``state`` since its newest snapshot."""
        with self._mutex:
            snapshot = self._held.get(state.repo)
        return state.last_seq - (snapshot.seq if snapshot is not None else 0)

    def after_commit(self, state: RepoState) -> None:
        """Take (and persist) a snapshot when ``state`` is :attr:`every` events past the
        last one. ``state`` must equal the committed log up to ``state.last_seq``."""
        if self.behind(state) >= self.every:
            self.save(state)

    def save(self, state: RepoState) -> None:
        """Snapshot ``state`` now (it must equal the committed log up to its ``last_seq``),
        keep it for :meth:`copy` and write it to the store when the store keeps them."""
        if state.last_seq == 0:
            return
        try:
            named = self._store.read(since=state.last_seq - 1, limit=1)
            if not named or named[0].seq != state.last_seq:
                return  # not a committed position (cannot happen after a commit)
            snapshot = take_snapshot(state, named[0].hash)
            with self._mutex:
                self._held[state.repo] = snapshot
            if isinstance(self._store, SnapshotStore):
                self._store.save_snapshot(snapshot)
        except StoreError as exc:
            _log().warning("cannot save the projection snapshot of %s: %s", state.repo, exc)

    def save_all(self, states: dict[str, RepoState], *, min_tail: int = 1) -> None:
        """Snapshot every state at least ``min_tail`` events past its snapshot (shutdown)."""
        for state in states.values():
            if state.last_seq and self.behind(state) >= min_tail:
                self.save(state)
