"""An etcd transaction starts from the head its store's own last commit left, and a
lost race or a write-less transaction on that memory never costs correctness."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import RenewLease
from detente.errors import ConcurrencyError
from detente.eventlog.envelope import GENESIS_HASH, verify_link
from detente.service import RepoConfig, Service
from detente.storage.base import NewEvent
from detente.storage.etcd import EtcdStore
from detente.storage.etcd_head import COOLDOWN, Head, HeadMemory
from detente.storage.factory import open_store
from storage.servers import EtcdCluster

from support import seed


def _event(n: int, subject: str = "claim/c") -> NewEvent:
    return NewEvent(f"e{subject}{n}", "claim.announced", 1, "demo", subject, {"n": n}, "t")


@pytest.fixture
def two_servers(etcd_cluster: EtcdCluster) -> Iterator[tuple[EtcdStore, EtcdStore]]:
    url = etcd_cluster.url()
    a, b = open_store(url), open_store(url)
    assert isinstance(a, EtcdStore) and isinstance(b, EtcdStore)
    yield a, b
    a.close()
    b.close()


def test_memory_gives_back_the_kept_head_once_marked_remembered_and_read_at_the_latest() -> None:
    memory = HeadMemory()
    assert memory.take() is None
    memory.keep(Head(7, "h7", 41, 41))
    assert memory.take() == Head(7, "h7", 41, 0, remembered=True)
    assert memory.take() is None  # taken: the next transaction reads unless kept again


def test_after_a_lost_race_the_next_transactions_read_the_head_before_memory_is_trusted() -> None:
    memory = HeadMemory()
    memory.keep(Head(1, "h1", 5, 5))
    memory.lost()
    for _ in range(COOLDOWN):
        memory.keep(Head(2, "h2", 6, 6))
        assert memory.take() is None
    memory.keep(Head(3, "h3", 7, 7))
    assert memory.take() == Head(3, "h3", 7, 0, remembered=True)
    assert memory.misses == 1


def test_a_transaction_with_an_unknown_outcome_forgets_the_head() -> None:
    memory = HeadMemory()
    memory.keep(Head(1, "h1", 5, 5))
    memory.forget()
    assert memory.take() is None


def test_a_single_writer_starts_every_transaction_after_its_first_from_memory(
    two_servers: tuple[EtcdStore, EtcdStore],
) -> None:
    a, _ = two_servers
    for n in range(5):
        with a.transaction("demo") as tx:
            tx.append([_event(n)], {"claim/c": n})
    assert (a.heads.hits, a.heads.misses) == (4, 0)
    assert [e.subject_revision for e in a.read()] == [1, 2, 3, 4, 5]


def test_a_commit_from_memory_after_another_server_appended_loses_and_the_next_one_commits(
    two_servers: tuple[EtcdStore, EtcdStore],
) -> None:
    a, b = two_servers
    with a.transaction("demo") as tx:
        tx.append([_event(0)], {"claim/c": 0})
    with b.transaction("demo") as tx:  # b read the head: it follows a's event
        tx.append([_event(0, "claim/d")], {"claim/d": 0})
    with pytest.raises(ConcurrencyError), a.transaction("demo") as tx:
        tx.append([_event(1)], {"claim/c": 1})  # sealed after a's own head: seq 2 is b's
    assert a.heads.misses == 1
    with a.transaction("demo") as tx:  # reads the head now
        assert tx.read_after(1, "demo")[0].subject == "claim/d"
        tx.append([_event(1)], {"claim/c": 1})
    prev, subjects = GENESIS_HASH, []
    for i, e in enumerate(a.iter_all(), start=1):
        assert verify_link(e, prev, i) is None
        prev, subjects = e.hash, [*subjects, e.subject]
    assert subjects == ["claim/c", "claim/d", "claim/c"]


def test_a_write_less_transaction_from_memory_fails_when_another_server_moved_the_head(
    two_servers: tuple[EtcdStore, EtcdStore],
) -> None:
    a, b = two_servers
    with a.transaction("demo") as tx:
        tx.append([_event(0)], {"claim/c": 0})
    with a.transaction("demo"):  # nothing moved: nothing to object to
        pass
    with b.transaction("demo") as tx:
        tx.append([_event(0, "claim/d")], {"claim/d": 0})
    with pytest.raises(ConcurrencyError), a.transaction("demo"):
        pass  # what it decided (say, a refusal) was decided on a log that had moved


def test_a_renewal_sent_to_a_server_whose_remembered_head_is_stale_is_renewed_not_refused(
    etcd_cluster: EtcdCluster, clock: FakeClock
) -> None:
    """A client renews on one server, then on another that last committed before it: the
    second server's projection lags, and its refusal (``revision_conflict``) would be
    wrong; the write-less transaction's head check sends the batch round again on the
    current log."""
    url = etcd_cluster.url()
    one = Service(open_store(url), clock, [RepoConfig("demo")])
    two = Service(open_store(url), clock, [RepoConfig("demo")])
    claim = one.claims.open_claim(seed("src/**")).claim
    for server in (two, one, two, one):  # each one's memory is stale when its turn comes
        clock.advance(1)
        renewed = server.claims.renew(
            RenewLease(claim.id, claim.lease.revision, claim.revision, 60)
        ).claim
        assert renewed.lease.revision == claim.lease.revision + 1
        claim = renewed
    assert isinstance(one.store, EtcdStore) and one.store.heads.misses >= 1
    assert one.audit().ok
    one.store.close()
    two.store.close()
