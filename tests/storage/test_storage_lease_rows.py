"""Lease rows: each claim's current lease, moved by compare-and-swap beside the log
(memory, SQLite, PostgreSQL and etcd keep them; a renewal there appends no event)."""

from __future__ import annotations

import pytest

from detente.errors import ConcurrencyError
from detente.storage.base import LeaseRow, LeaseStore, LeaseTx, Store, is_lease_tx
from detente.storage.factory import open_store
from storage.servers import EtcdCluster


@pytest.fixture
def leases(store: Store) -> Store:
    """The shared ``store`` fixture (every kind), which keeps lease rows."""
    assert isinstance(store, LeaseStore)
    return store


def _row(revision: int, claim: str = "clm_1", deadline: str = "2026-01-01T00:01:00Z") -> LeaseRow:
    return LeaseRow(claim, "demo", "lse_1", revision, 60, deadline, "2026-01-01T00:00:00Z")


def _write(store: Store, *rows: LeaseRow) -> list[LeaseRow]:
    with store.transaction("demo") as tx:
        assert isinstance(tx, LeaseTx)
        return tx.write_leases(rows)


def _after(store: Store, stamp: int) -> list[LeaseRow]:
    assert isinstance(store, LeaseStore)
    return store.leases_after(stamp, "demo")


def test_a_claim_keeps_one_lease_row_whose_stamp_rises_with_every_move(leases: Store) -> None:
    [first] = _write(leases, _row(2))
    [second] = _write(leases, _row(3, deadline="2026-01-01T00:02:00Z"))
    assert second.stamp > first.stamp > 0
    assert _after(leases, 0) == [second]  # one row per claim, the newest
    assert _after(leases, second.stamp) == []
    assert leases.head()[0] == 0  # no event was appended


def test_every_store_transaction_is_known_as_a_lease_tx_and_a_bare_object_is_not(
    leases: Store,
) -> None:
    for _ in range(2):  # the second answer comes from the per-class memory
        with leases.transaction("demo") as tx:
            assert is_lease_tx(tx) is isinstance(tx, LeaseTx) is True
        assert is_lease_tx(object()) is False  # type: ignore[arg-type]


def test_a_row_not_above_the_stored_revision_is_refused_and_nothing_is_written(
    leases: Store,
) -> None:
    [held] = _write(leases, _row(3))
    with pytest.raises(ConcurrencyError):
        _write(leases, _row(4, claim="clm_2"), _row(3))  # another writer moved it to 3 first
    assert _after(leases, 0) == [held]


def test_rows_of_a_transaction_that_rolls_back_are_not_kept(leases: Store) -> None:
    with pytest.raises(RuntimeError), leases.transaction("demo") as tx:
        assert isinstance(tx, LeaseTx)
        tx.write_leases([_row(2)])
        raise RuntimeError("the command failed after its renewal")
    assert _after(leases, 0) == []


def test_rows_are_read_per_repository(leases: Store) -> None:
    _write(leases, _row(2), LeaseRow("clm_9", "other", "lse_9", 2, 60, "t", "t"))
    assert [r.claim_id for r in _after(leases, 0)] == ["clm_1"]


def test_on_etcd_of_two_servers_that_move_one_lease_at_once_the_second_loses_its_txn(
    etcd_cluster: EtcdCluster,
) -> None:
    url = etcd_cluster.url()
    first, second = open_store(url), open_store(url)
    _write(first, _row(2))
    with pytest.raises(ConcurrencyError), second.transaction("demo") as late:
        assert isinstance(late, LeaseTx)
        late.write_leases([_row(3, deadline="2026-01-01T00:05:00Z")])  # read revision 2
        with first.transaction("demo") as early:
            assert isinstance(early, LeaseTx)
            [won] = early.write_leases([_row(3)])  # read revision 2 too, commits first
    assert _after(second, 0) == [won]
    first.close()
    second.close()
