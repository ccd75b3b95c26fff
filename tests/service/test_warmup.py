"""Warming a service before its first command (:mod:`detente.service.warmup`)."""

from __future__ import annotations

import logging
from pathlib import Path

from detente.clock import FakeClock
from detente.runtime import build_service
from detente.service import RepoConfig, Service
from detente.service.warmup import SERVICES, warm
from detente.storage.sqlite import SqliteStore

from source_repo import make_source_repo
from support import log_records


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


def test_warm_logs_a_projection_it_cannot_load_and_returns(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d.db")
    service = Service(store, FakeClock(), [RepoConfig("a")])
    store.close()  # every read now fails
    with log_records("detente.storage", logging.WARNING) as seen:
        warm(service)
    [record] = [r for r in seen if "warm-up" in r.getMessage()]
    assert "projection of a" in record.getMessage()
    assert record.exc_info is not None


def _batch_checks() -> set[str]:
    """Process ids of this process's ``git cat-file --batch-check`` children."""
    found = set()
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                cmdline = (Path("/proc") / pid / "cmdline").read_bytes()
            except OSError:
                continue
            if b"cat-file\0--batch-check" in cmdline:
                found.add(pid)
    return found


def test_warm_starts_the_commit_check_of_a_repository_with_a_working_tree(
    tmp_path: Path,
) -> None:
    make_source_repo(tmp_path / "repo")
    service = build_service([tmp_path / "repo"], store_url=f"sqlite:///{tmp_path / 'd.db'}")
    before = _batch_checks()
    warm(service)
    assert _batch_checks() - before  # a new one runs
    service.store.close()
