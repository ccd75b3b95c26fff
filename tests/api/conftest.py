"""A real uvicorn server in a background thread, on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from detente.clock import FakeClock
from detente.server import build_app
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from threaded_server import serve_in_thread

from support import counting_ids


@contextmanager
def running(service: Service, **app_options: Any) -> Iterator[str]:
    """Serve ``service`` over HTTP until the block exits; yields the base URL.

    ``app_options`` go to :func:`~detente.server.build_app` (e.g. ``max_body_bytes``).
    """
    with serve_in_thread(build_app(service, **app_options)) as base:
        yield base


@pytest.fixture
def sqlite_service(tmp_path: Path, clock: FakeClock) -> Service:
    return Service(
        SqliteStore(tmp_path / "detente.db"), clock, [RepoConfig("demo")], ids=counting_ids()
    )


@pytest.fixture
def live(sqlite_service: Service) -> Iterator[str]:
    with running(sqlite_service) as base:
        yield base


@pytest.fixture
def http(live: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live, timeout=10) as client:
        yield client
