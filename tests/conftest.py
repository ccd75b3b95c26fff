"""Fixtures shared by every test package: a fake clock, services on each store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.base import Store
from detente.storage.memory import MemoryStore
from detente.storage.sqlite import SqliteStore

from support import counting_ids


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s: Store = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "detente.db")
    yield s
    s.close()


@pytest.fixture
def service(store: Store, clock: FakeClock) -> Service:
    return Service(store, clock, [RepoConfig("demo")], ids=counting_ids())
