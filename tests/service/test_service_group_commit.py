"""Group commit: commands waiting on one repository share one store transaction, each
decided in order and answered with its own result or error."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeObjective, RenewLease
from detente.domain.claims.decide import decide_renew
from detente.domain.claims.model import Claim
from detente.domain.claims.objective import decide_objective_change
from detente.errors import ConcurrencyError, RevisionConflict
from detente.service import RepoConfig, Service
from detente.storage.base import Store
from detente.storage.memory import MemoryStore
from detente.storage.sqlite import SqliteStore
from storage.live import wait_until

from support import counting_ids, seed


def _renew(claim: Claim, *, revision: int | None = None) -> RenewLease:
    return RenewLease(claim.id, claim.lease.revision, revision or claim.revision, 600)


def _retitle(service: Service, claim: Claim) -> Claim:
    """A command that appends one event (a renewal moves a lease row and appends none)."""
    cmd = ChangeObjective(claim.id, claim.revision, f"{claim.objective}, again")
    changed: Claim = service.run(
        "demo",
        lambda s: decide_objective_change(s, cmd, service.clock.now(), service.ids, service.policy),
        lambda s, _: s.claims[claim.id],
    )
    return changed


@contextmanager
def _queued(service: Service, calls: list[Callable[[], Any]]) -> Iterator[list[Any]]:
    """Hold the repository while ``calls`` run on threads and queue up, in their order
    (each thread starts once the one before it is queued); on exit let them go (one batch
    takes them all) and wait for every answer (a result or the exception)."""
    answers: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            answers[i] = calls[i]()
        except Exception as exc:
            answers[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    with service.lock("demo"):
        for n, t in enumerate(threads, start=1):
            t.start()
            wait_until(lambda n=n: service.group_commit.queued("demo") == n, 10, f"call {n} queues")
    for t in threads:
        t.join(timeout=30)
    yield answers


def test_concurrent_renewals_commit_in_one_transaction_each_with_its_own_answer(
    tmp_path: Any, clock: FakeClock
) -> None:
    store = SqliteStore(tmp_path / "d.db")
    service = Service(store, clock, [RepoConfig("demo")], ids=counting_ids())
    claims = [service.claims.open_claim(seed(f"c{i}/**", agent=f"a{i}")).claim for i in range(8)]
    before = service.group_commit.batches
    calls = [lambda c=c: service.claims.renew(_renew(c)).claim for c in claims]
    with _queued(service, calls) as answers:
        pass
    assert service.group_commit.batches == before + 1
    assert [a.id for a in answers] == [c.id for c in claims]
    assert all(
        a.lease.revision == c.lease.revision + 1 for a, c in zip(answers, claims, strict=True)
    )
    assert service.audit().ok
    store.close()


def test_a_refused_command_in_a_batch_does_not_sink_the_others(service: Service) -> None:
    a, b, c = (service.claims.open_claim(seed(f"{n}/**", agent=n)).claim for n in "abc")
    head = service.head()
    calls = [
        lambda: service.claims.renew(_renew(a)).claim,
        lambda: service.claims.renew(_renew(b, revision=b.revision + 5)).claim,
        lambda: service.claims.renew(_renew(c)).claim,
    ]
    with _queued(service, calls) as answers:
        pass
    assert isinstance(answers[1], RevisionConflict)
    assert [answers[0].id, answers[2].id] == [a.id, c.id]
    assert [x.lease.revision for x in (answers[0], answers[2])] == [2, 2]
    assert service.claims.get_claim(b.id).claim.lease.revision == b.lease.revision
    # Renewals move lease rows where the store keeps them, else each appends an event.
    assert service.head() == head + (0 if service.lease_rows else 2)


def _renew_failing_its_answer(service: Service, claim: Claim) -> Any:
    """A renewal whose answer (view) fails after its events were appended and folded."""

    def view(state: Any, stored: Any) -> Any:
        raise KeyError("a view that fails")

    def decide(state: Any) -> Any:
        now = service.clock.now()
        return decide_renew(state, _renew(claim), now, service.ids, service.policy)

    return service.run("demo", decide, view)


def test_a_command_whose_answer_fails_appends_nothing_and_leaves_no_trace_in_the_projection(
    service: Service,
) -> None:
    claim = service.claims.open_claim(seed("x/**")).claim
    head = service.head()
    with pytest.raises(KeyError):
        _renew_failing_its_answer(service, claim)
    assert service.head() == head
    assert service.claims.get_claim(claim.id).claim.lease.revision == claim.lease.revision
    renewed = service.claims.renew(_renew(claim)).claim  # the same renewal, answered this time
    assert renewed.lease.revision == claim.lease.revision + 1
    assert service.audit().ok


def test_a_changed_objective_whose_answer_fails_is_not_in_the_log(service: Service) -> None:
    claim = service.claims.open_claim(seed("x/**")).claim
    head = service.head()
    cmd = ChangeObjective(claim.id, claim.revision, "a new objective")
    with pytest.raises(KeyError):
        service.run(
            "demo",
            lambda s: decide_objective_change(
                s, cmd, service.clock.now(), service.ids, service.policy
            ),
            lambda s, _: s.claims["clm_elsewhere"],
        )
    assert service.head() == head
    assert [e.type for e in service.events(since=head)[0]] == []


def test_a_command_whose_answer_fails_in_a_batch_is_dropped_and_the_others_commit(
    service: Service,
) -> None:
    a, b, c = (service.claims.open_claim(seed(f"{n}/**", agent=n)).claim for n in "abc")
    head = service.head()
    calls = [
        lambda: service.claims.renew(_renew(a)).claim,
        lambda: _renew_failing_its_answer(service, b),
        lambda: service.claims.renew(_renew(c)).claim,
    ]
    with _queued(service, calls) as answers:
        pass
    assert isinstance(answers[1], KeyError)
    assert [answers[0].lease.revision, answers[2].lease.revision] == [
        a.lease.revision + 1,
        c.lease.revision + 1,
    ]
    # Renewals move lease rows where the store keeps them, else each appends an event.
    assert service.head() == head + (0 if service.lease_rows else 2)
    assert service.claims.get_claim(b.id).claim.lease.revision == b.lease.revision
    assert service.audit().ok


def test_each_command_is_decided_against_the_state_its_predecessor_left(
    service: Service,
) -> None:
    claim = service.claims.open_claim(seed("x/**")).claim
    calls = [lambda: service.claims.renew(_renew(claim)).claim for _ in range(2)]
    with _queued(service, calls) as answers:
        pass
    first, second = answers
    assert first.lease.revision == claim.lease.revision + 1  # it shows its own effect
    assert isinstance(second, RevisionConflict)  # it presented the revision the first moved


def test_expiry_found_by_a_batch_is_committed_even_when_every_command_is_refused(
    service: Service, clock: FakeClock
) -> None:
    due = service.claims.open_claim(seed("old/**", ttl=60)).claim
    live = service.claims.open_claim(seed("new/**", ttl=600, agent="bob")).claim
    clock.advance(120)
    calls = [lambda: service.claims.renew(_renew(live, revision=live.revision + 9))]
    with _queued(service, calls) as answers:
        pass
    assert isinstance(answers[0], RevisionConflict)
    assert service.claims.get_claim(due.id).claim.status.value == "expired"


class _BoundedMemoryStore(MemoryStore):
    """The memory store with a transaction limit (as etcd's ``--max-txn-ops``)."""

    max_events_per_transaction = 4


def test_a_bounded_store_splits_a_queue_into_batches_that_fit_its_transaction_limit(
    clock: FakeClock,
) -> None:
    store = _BoundedMemoryStore()
    service = Service(store, clock, [RepoConfig("demo")], ids=counting_ids())
    claims = [service.claims.open_claim(seed(f"c{i}/**", agent=f"a{i}")).claim for i in range(9)]
    before = service.group_commit.batches
    calls = [lambda c=c: _retitle(service, c) for c in claims]
    with _queued(service, calls) as answers:
        pass
    assert [a.id for a in answers] == [c.id for c in claims]
    assert service.group_commit.batches - before == 3  # 3 changes fit 3/4 of 4 events
    assert service.audit().ok


class _RacingStore(MemoryStore):
    """A memory store that makes the next ``losses`` commits lose a race (as etcd does
    when another server moved the head), recording where each catch-up started."""

    def __init__(self) -> None:
        super().__init__()
        self.losses = 0
        self.catch_ups: list[int] = []

    @contextmanager
    def transaction(self, repo: str) -> Iterator[Any]:
        with super().transaction(repo) as tx:
            read_after = tx.read_after

            def recorded(seq: int, repo: str) -> list[Any]:
                self.catch_ups.append(seq)
                return read_after(seq, repo)

            tx.read_after = recorded  # type: ignore[method-assign]
            yield tx
            if self.losses and tx.events:
                self.losses -= 1
                raise ConcurrencyError("another server appended first")


def test_a_lost_race_retries_on_a_copy_at_the_snapshot_and_folds_only_the_tail(
    clock: FakeClock,
) -> None:
    store = _RacingStore()
    service = Service(store, clock, [RepoConfig("demo")], ids=counting_ids())
    service.checkpoints.every = 5
    claims = [service.claims.open_claim(seed(f"c{i}/**", agent=f"a{i}")).claim for i in range(4)]
    snapshot_seq = service.head() - service.checkpoints.behind(service.current_state("demo"))
    assert snapshot_seq > 0
    store.losses, store.catch_ups = 1, []
    changed = _retitle(service, claims[-1])
    assert changed.revision == claims[-1].revision + 1
    assert store.catch_ups[1] == snapshot_seq  # the retry folded the tail from the snapshot
    assert service.audit().ok


def test_a_race_lost_twice_by_a_batch_reruns_each_command_alone(clock: FakeClock) -> None:
    store = _RacingStore()
    service = Service(store, clock, [RepoConfig("demo")], ids=counting_ids())
    a, b = (service.claims.open_claim(seed(f"{n}/**", agent=n)).claim for n in "ab")
    store.losses = 2
    calls = [lambda c=c: _retitle(service, c) for c in (a, b)]
    with _queued(service, calls) as answers:
        pass
    assert [x.revision for x in answers] == [a.revision + 1, b.revision + 1]
    assert service.audit().ok


@pytest.mark.parametrize("kind", ["memory"])
def test_a_command_alone_that_loses_twice_gets_the_store_concurrency_error(
    kind: str, clock: FakeClock
) -> None:
    store: Store = _RacingStore()
    service = Service(store, clock, [RepoConfig("demo")], ids=counting_ids())
    claim = service.claims.open_claim(seed("a/**")).claim
    store.losses = 2  # type: ignore[attr-defined]
    with pytest.raises(ConcurrencyError):
        _retitle(service, claim)
    assert _retitle(service, claim).revision == claim.revision + 1
