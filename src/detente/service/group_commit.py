"""Group commit: the commands waiting on one repository share one store transaction.

Every command of a repository is queued; whichever thread holds the repository's
command lock next takes the queue and runs it as one batch in one store transaction
(one ``BEGIN IMMEDIATE`` on SQLite, one advisory lock and one ``COMMIT`` on PostgreSQL,
one ``Txn`` on etcd). Inside the batch nothing changes for a command:

- due leases expire first (committed even when every command is refused);
- each command is decided in queue order against the state its predecessors left,
  its events appended with their expected stream revisions and folded, and its answer
  (``view``) computed right then, so it sees its own effect and nobody's after it;
- a command is one unit of work: decide, append, fold (with the reactions it triggers)
  and answer. A command that is refused (a :class:`~detente.errors.DetenteError`) or
  whose decision fails appends nothing and the batch goes on. A command whose append,
  reactions or answer fails is *dropped*: the batch's transaction rolls back (nothing
  of it was durable, nothing of it was answered), the projection restarts from its
  snapshot, and the batch runs again without it; it is answered with its own error.
  No savepoint per command, so no extra round trip on PostgreSQL or etcd: a batch pays
  for a failure only when one happens (a bug, never a refusal);
- the batch is acknowledged only after the commit returns, so nothing acknowledged can be
  lost: a crash before the commit loses the whole batch, and none of it was answered.

A batch the store refuses as a whole: a lost race (``ConcurrencyError``) is retried once on
fresh state (the projection restored from the newest snapshot plus the log's tail, never
replayed from event 1; a start from a stale remembered head does not count, as the retry
reads the head); a second loss, a batch larger than a bounded store takes, or an
unexpected failure re-runs its commands one per transaction, so one bad command sinks
only itself. A store outage (``store_unavailable``) answers every command with it.

On a store with a transaction limit (etcd's ``--max-txn-ops``,
:class:`~detente.storage.base.BoundedStore`), a command after the first joins the batch
only while its events fit in three quarters of the limit (the last quarter is room for
the reactions and expiries the batch triggers); the others wait for the next batch.

The design follows the classic group commit of database logs (e.g. PostgreSQL's
``commit_delay``, MySQL's binary-log group commit), without a delay: a batch is whatever
queued while the previous one held the lock.

The runner calls the core's steps through :class:`~detente.service.command_path.CommandPath`
and reads the time once per batch (:class:`~detente.service.batch_clock.BatchClock`); both
names stay importable from here.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from detente.domain.events import Event
from detente.domain.state import RepoState
from detente.errors import ConcurrencyError, StoreError
from detente.eventlog.envelope import StoredEvent
from detente.service.batch_clock import BatchClock
from detente.service.batch_effects import MAX_REDECIDE, BatchEffect, Redecide
from detente.service.command_path import CommandPath
from detente.service.lease_rows import keep_unseen_leases, refuse_on_full_view
from detente.service.wake import Wake
from detente.storage.base import BoundedStore, OptimisticStore, Store, StoreTx

__all__ = ["MAX_BATCH", "BatchClock", "CommandPath", "GroupCommit", "Pending"]

#: Commands one batch holds at most (on any store).
MAX_BATCH = 128

#: ``state -> the command's events``.
Decide = Callable[[RepoState], list[Event]]
#: ``(state right after the command, the events stored for it) -> its answer``.
View = Callable[[RepoState, list[StoredEvent]], Any]


class _Dropped(Exception):
    """A command's append, reactions or answer failed: its batch rolls back and runs again
    without it."""

    def __init__(self, pending: Pending, error: Exception) -> None:
        super().__init__(str(error))
        self.pending, self.error = pending, error


@dataclass(eq=False)
class Pending:
    """One queued command and, once its batch committed, its answer or error."""

    decide: Decide
    view: View
    #: The command is a lease renewal (it moves a lease row and appends no event).
    renewal: bool = False
    done: bool = False
    answer: Any = None
    error: BaseException | None = None
    stored: list[StoredEvent] = field(default_factory=list)
    #: Set when answered, or when promoted to candidate for the lock.
    wake: Wake = field(default_factory=Wake)
    promoted: bool = False

    def finish(self, answer: Any, error: BaseException | None, stored: list[StoredEvent]) -> None:
        """Record the outcome and wake the waiting thread."""
        self.answer, self.error, self.stored, self.done = answer, error, stored, True
        self.wake.set()


class GroupCommit:
    """The queues and the batch runner of one service core.

    Args:
        core: the command path's steps (a :class:`~detente.service.core.ServiceCore`).
    """

    def __init__(self, core: CommandPath) -> None:
        self._core = core
        self._mutex = threading.Lock()
        self._queues: dict[str, deque[Pending]] = defaultdict(deque)
        self._candidate: dict[str, bool] = defaultdict(bool)
        store = core.store
        bound = store.max_events_per_transaction if isinstance(store, BoundedStore) else None
        #: Events one batch may append before a later command waits for the next batch.
        self.event_budget = None if bound is None else max(1, bound * 3 // 4)
        self._bound = bound
        #: Batches committed and commands they carried (for benchmarks and tests).
        self.batches = 0
        self.commands = 0

    def submit(self, repo: str, decide: Decide, view: View, *, renewal: bool = False) -> Any:
        """Queue a command and return its answer once its batch committed (``renewal``:
        it only moves a lease; see :class:`~detente.storage.base.OptimisticStore`).

        At most one waiting thread per repository blocks on the repository's lock (the
        *candidate*); the others sleep until their command is answered or they are
        promoted to candidate, so an answered thread returns at once instead of queueing
        for the lock behind the next batch. A thread that already holds the lock (a
        caller reading its projection around the command) leads at once.

        Raises:
            DetenteError: the command's refusal, or the store's error for its batch.
        """
        mine = Pending(decide, view, renewal)
        lock = self._core.lock(repo)
        with self._mutex:
            self._queues[repo].append(mine)
        if lock.acquire(blocking=False):  # free, or already this thread's
            try:
                self._lead(repo, mine)
            finally:
                lock.release()
                self._hand_off(repo)
        else:
            with self._mutex:
                candidate = not self._candidate[repo]
                self._candidate[repo] = True
            if not candidate:
                mine.wake.wait()  # answered, or promoted to candidate
            if candidate or mine.promoted:
                try:
                    with lock:
                        with self._mutex:
                            self._candidate[repo] = False
                        self._lead(repo, mine)
                finally:
                    self._hand_off(repo)
        if mine.error is not None:
            raise mine.error
        return mine.answer

    def _lead(self, repo: str, mine: Pending) -> None:
        """Run batches (holding the lock) until ``mine`` is answered."""
        while not mine.done:
            batch = self._take(repo)
            if not batch:  # cannot happen: a taker answers all it took before unlocking
                raise RuntimeError("a queued command vanished (a bug: please report it)")
            deferred: list[Pending] = []
            try:
                deferred = self._run(repo, batch)
            finally:
                waiting = {id(p) for p in deferred}
                lost = [p for p in batch if not p.done and id(p) not in waiting]
                self._fail(lost, RuntimeError("the batch ended without an answer"))
            if deferred:
                with self._mutex:
                    self._queues[repo].extendleft(reversed(deferred))

    def _hand_off(self, repo: str) -> None:
        """After leading: promote the oldest waiting command's thread to candidate, unless
        a candidate is already on its way to the lock."""
        with self._mutex:
            queue = self._queues[repo]
            if queue and not self._candidate[repo]:
                self._candidate[repo] = True
                queue[0].promoted = True
                queue[0].wake.set()

    def queued(self, repo: str) -> int:
        """Commands of ``repo`` waiting for a batch."""
        with self._mutex:
            return len(self._queues[repo])

    def _take(self, repo: str) -> list[Pending]:
        with self._mutex:
            queue = self._queues[repo]
            return [queue.popleft() for _ in range(min(len(queue), MAX_BATCH))]

    def _run(self, repo: str, batch: list[Pending]) -> list[Pending]:
        """Run ``batch`` (answering each command); returns the commands deferred to the
        next batch (they did not fit a bounded store's transaction)."""
        core = self._core
        carried: list[StoredEvent] = []  # expiries committed before the commands ran
        races = redecided = 0
        effects = core.effects
        while True:
            for effect in effects:
                effect.begin(repo)
            state = core.current_state(repo)
            answers: list[tuple[Pending, Any, BaseException | None, list[StoredEvent]]] = []
            deferred: list[Pending] = []
            # Set before anything is folded (a step may fail halfway): the projection of a
            # transaction that rolls back restarts from its snapshot.
            folded = False
            appended = 0
            more_due = False
            try:
                with _transaction(core.store, repo, batch) as tx, core.clock.pinned():
                    core.catch_up_tx(tx, state)
                    seen_stamp = state.claims.lease_stamp
                    timeouts, more_due = core.timeouts(state)
                    folded = bool(timeouts)
                    common = core.commit_events(tx, state, timeouts)
                    appended = len(common)
                    if not more_due:
                        for p in batch:
                            if deferred:
                                deferred.append(p)
                                continue
                            for effect in effects:
                                effect.mark(repo)
                            try:
                                events = p.decide(state)
                            except Exception as exc:  # refused (or a bug): this one alone
                                refuse_on_full_view(tx, exc)
                                answers.append((p, None, exc, common))
                                continue
                            budget = self.event_budget
                            if budget is not None and answers and appended + len(events) > budget:
                                for effect in effects:
                                    effect.retract(repo)
                                deferred.append(p)
                                continue
                            folded = folded or bool(events)
                            stored, answer = self._unit(tx, state, p, events, carried + common)
                            appended += len(stored) - len(carried) - len(common)
                            answers.append((p, answer, None, stored))
                        for effect in effects:
                            effect.prepare(repo)
            except Redecide as exc:
                self._abort(repo, effects)
                core.discard(repo, folded=True)
                redecided += 1
                if redecided < MAX_REDECIDE:
                    continue
                return self._alone(repo, batch, exc)
            except _Dropped as drop:
                self._abort(repo, effects)
                core.discard(repo, folded=True)
                drop.pending.finish(None, drop.error, [])
                batch = [p for p in batch if p is not drop.pending]
                if not batch:
                    return []
                continue  # the others, on the state before the batch
            except ConcurrencyError as exc:
                self._abort(repo, effects)
                core.discard(repo, folded=folded)
                # A start from a remembered head that was stale is a miss, not a race the
                # retry could lose again: the store reads the head for the next ones.
                races += 0 if exc.remembered else 1
                if races < 2:
                    continue
                return self._alone(repo, batch, exc)
            except StoreError as exc:
                self._abort(repo, effects)
                core.discard(repo, folded=folded)
                if self._bound is not None and appended > self._bound:
                    return self._alone(repo, batch, exc)
                self._fail(batch, exc)
                return []
            except Exception as exc:
                self._abort(repo, effects)
                core.discard(repo, folded=folded)
                return self._alone(repo, batch, exc)
            except BaseException as exc:
                self._abort(repo, effects)
                core.discard(repo, folded=folded)
                self._fail(batch, exc)
                raise
            keep_unseen_leases(tx, state, seen_stamp)
            core.committed(state, appended=appended > 0)
            if more_due:  # expire the next lot before the commands run
                for effect in effects:
                    effect.finish(repo)
                carried += common
                continue
            for p, answer, error, stored in answers:
                p.finish(answer, error, stored)
            # After the answers (what an effect does now is not part of them: checkouts
            # following a memory commit), still holding the lock, before the next batch.
            for effect in effects:
                effect.finish(repo)
            self.batches += 1
            self.commands += len(answers)
            return deferred

    def _unit(
        self,
        tx: StoreTx,
        state: RepoState,
        p: Pending,
        events: list[Event],
        before: list[StoredEvent],
    ) -> tuple[list[StoredEvent], Any]:
        """One command's append, fold, reactions and answer, in the batch's transaction.

        Returns:
            The events stored for the command (``before``: the batch's timeouts first) and
            its answer.

        Raises:
            _Dropped: a step failed (the batch rolls back and runs again without ``p``).
            StoreError: the store refused the append (the whole batch's fate).
        """
        try:
            stored = before + self._core.commit_events(tx, state, events)
            return stored, p.view(state, stored)
        except StoreError:
            raise
        except Exception as exc:
            raise _Dropped(p, exc) from exc

    def _alone(self, repo: str, batch: list[Pending], exc: BaseException) -> list[Pending]:
        """Re-run each command of a failed batch in its own transaction; a batch of one
        fails with ``exc``."""
        if len(batch) == 1:
            self._fail(batch, exc)
            return []
        for p in batch:
            for later in self._run(repo, [p]):  # a batch of one is never deferred
                self._fail([later], exc)
        return []

    @staticmethod
    def _abort(repo: str, effects: Sequence[BatchEffect]) -> None:
        """Undo what the effects staged for a transaction that rolled back (an undo that
        fails must not hide the transaction's own error)."""
        for effect in effects:
            try:
                effect.abort(repo)
            except Exception:
                continue

    @staticmethod
    def _fail(batch: list[Pending], exc: BaseException) -> None:
        for p in batch:
            if not p.done:
                p.finish(None, exc, [])


def _transaction(
    store: Store, repo: str, batch: Sequence[Pending]
) -> AbstractContextManager[StoreTx]:
    """The batch's store transaction, telling an optimistic store whether the batch holds
    a command other than a renewal (:class:`~detente.storage.base.OptimisticStore`)."""
    if isinstance(store, OptimisticStore):
        return store.transaction_for(repo, appends=not all(p.renewal for p in batch))
    return store.transaction(repo)
