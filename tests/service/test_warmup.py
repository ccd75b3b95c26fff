"""Warming a service before its first command (:mod:`detente.service.warmup`)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.service.warmup import SERVICES, warm
from detente.storage.sqlite import SqliteStore


def test_warm_builds_every_aggregate_service_and_loads_every_projection(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d.db")
    service = Service(store, FakeClock(), [RepoConfig("a"), RepoConfig("b")])
    warm(service)
    assert set(SERVICES) <= set(vars(service))  # each cached property was built
    for repo in ("a", "b"):
        with service.lock(repo):
            assert service.current_state(repo) is service.current_state(repo)
            assert service.current_state(repo).repo == repo
    store.close()


def test_warm_logs_a_projection_it_cannot_load_and_returns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SqliteStore(tmp_path / "d.db")
    service = Service(store, FakeClock(), [RepoConfig("a")])
    store.close()  # every read now fails
    with caplog.at_level(logging.WARNING, logger="detente.storage"):
        warm(service)
    [record] = [r for r in caplog.records if "warm-up" in r.getMessage()]
    assert "projection of a" in record.getMessage()
    assert record.exc_info is not None
