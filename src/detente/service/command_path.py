"""The steps of the command path that the batch runner composes (:class:`CommandPath`).

:class:`~detente.service.group_commit.GroupCommit` runs batches through this protocol:
the service core (:class:`~detente.service.core.ServiceCore`) implements it and builds
the runner, and the runner never imports the core.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

from detente.domain.events import Event
from detente.domain.state import RepoState
from detente.eventlog.envelope import StoredEvent
from detente.service.batch_clock import BatchClock
from detente.service.batch_effects import BatchEffect
from detente.storage.base import Store, StoreTx

__all__ = ["CommandPath"]


class CommandPath(Protocol):
    """The steps of the command path the batch runner composes (the service core's);
    call each holding the repository's lock."""

    @property
    def store(self) -> Store: ...

    @property
    def clock(self) -> BatchClock: ...

    def lock(self, repo: str) -> threading.RLock:
        """The repository's command lock (re-entrant)."""
        ...

    def current_state(self, repo: str) -> RepoState:
        """The cached projection of ``repo``."""
        ...

    def catch_up_tx(self, tx: StoreTx, state: RepoState) -> None:
        """Fold the log's events after ``state.last_seq`` (read in ``tx``)."""
        ...

    def timeouts(self, state: RepoState) -> tuple[list[Event], bool]:
        """Expiries and meeting escalations due now; the flag: more are due after these."""
        ...

    def commit_events(
        self, tx: StoreTx, state: RepoState, events: Sequence[Event]
    ) -> list[StoredEvent]:
        """Append ``events`` and the reactions they trigger in ``tx``, folding them into
        ``state``."""
        ...

    def discard(self, repo: str, *, folded: bool) -> None:
        """A transaction rolled back: forget the projection when it folded anything."""
        ...

    def committed(self, state: RepoState, *, appended: bool) -> None:
        """A transaction committed: wake watchers, snapshot when due."""
        ...

    @property
    def effects(self) -> Sequence[BatchEffect]:
        """What commits with every batch (see :class:`BatchEffect`)."""
        ...
