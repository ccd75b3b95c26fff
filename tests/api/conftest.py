"""A real uvicorn server in a background thread, on a free loopback port."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from detente.clock import FakeClock
from detente.server import build_app
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import counting_ids


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Server(uvicorn.Server):
    """A uvicorn server that signals when it accepts connections."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@contextmanager
def running(service: Service, **app_options: Any) -> Iterator[str]:
    """Serve ``service`` over HTTP until the block exits; yields the base URL.

    ``app_options`` go to :func:`~detente.server.build_app` (e.g. ``max_body_bytes``).
    """
    port = free_port()
    app = build_app(service, **app_options)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = _Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    assert server.ready.wait(timeout=10), "server did not start within 10 s"
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)


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
