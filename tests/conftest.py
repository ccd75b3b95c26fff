"""Fixtures shared by every test package: a fake clock, services on each store.

The ``store`` fixture runs every contract and service test on memory, SQLite, PostgreSQL and
etcd; the two servers start once per session (``tests/storage/servers.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.base import Store
from detente.storage.factory import open_store
from detente.storage.memory import MemoryStore
from detente.storage.sqlite import SqliteStore
from storage.servers import etcd_cluster, postgres_server  # noqa: F401  (session fixtures)

from support import counting_ids

# No test is timed (performance is measured in bench/): Hypothesis's per-example deadline
# would fail a correct example on a loaded machine, so it is off for every property test.
settings.register_profile("untimed", deadline=None)
settings.load_profile("untimed")


@pytest.fixture(autouse=True, scope="session")
def git_identity() -> Iterator[None]:
    """Tests commit in throwaway repositories: give git an identity on a fresh machine
    (without overriding one the environment already sets)."""
    import os

    added = {
        key: value
        for key, value in {
            "GIT_AUTHOR_NAME": "detente tests",
            "GIT_AUTHOR_EMAIL": "tests@detente.invalid",
            "GIT_COMMITTER_NAME": "detente tests",
            "GIT_COMMITTER_EMAIL": "tests@detente.invalid",
        }.items()
        if key not in os.environ
    }
    os.environ.update(added)
    yield
    for key in added:
        os.environ.pop(key, None)


@pytest.fixture(autouse=True, scope="session")
def embeddings_in_memory() -> Iterator[None]:
    """Tests keep embeddings in memory only: the on-disk cache under the user's cache
    directory is not shared by concurrent test runs (its own tests point it at a
    temporary file). An environment that sets ``DETENTE_EMBED_PERSIST`` keeps it."""
    import os

    added = "DETENTE_EMBED_PERSIST" not in os.environ
    if added:
        os.environ["DETENTE_EMBED_PERSIST"] = "0"
    yield
    if added:
        os.environ.pop("DETENTE_EMBED_PERSIST", None)


@pytest.fixture(autouse=True)
def protocol_invariants(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command any test runs through a service is followed by the protocol
    invariants check (``tests/invariant_checks.py``)."""
    from detente.service.core import ServiceCore
    from invariant_checks import checked_execute

    monkeypatch.setattr(ServiceCore, "execute", checked_execute(ServiceCore.execute))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["memory", "sqlite", "postgres", "etcd"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s: Store
    if request.param == "memory":
        s = MemoryStore()
    elif request.param == "sqlite":
        s = SqliteStore(tmp_path / "detente.db")
    elif request.param == "postgres":  # a fresh database on the session's server
        s = open_store(request.getfixturevalue("postgres_server").new_database())
    else:  # a fresh key prefix on the session's 3-member cluster
        s = open_store(request.getfixturevalue("etcd_cluster").url())
    yield s
    s.close()


@pytest.fixture
def service(store: Store, clock: FakeClock) -> Service:
    return Service(store, clock, [RepoConfig("demo")], ids=counting_ids())
