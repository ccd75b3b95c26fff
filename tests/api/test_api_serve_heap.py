"""``serve`` freezes the heap it starts with, so full collections skip what lives as long
as the process (the pauses showed in the event stream's p99)."""

from __future__ import annotations

import gc
from typing import Any

import pytest
import uvicorn

from detente.clock import FakeClock
from detente.server import serve
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore


def test_serve_freezes_the_startup_heap_before_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    service = Service(MemoryStore(), FakeClock(), [RepoConfig("demo")])
    seen: list[int] = []

    def run(self: uvicorn.Server, sockets: Any = None) -> None:  # the server's loop itself
        seen.append(gc.get_freeze_count())

    monkeypatch.setattr(uvicorn.Server, "run", run)
    gc.unfreeze()
    try:
        serve(service, port=0, log_level="warning")
    finally:
        gc.unfreeze()  # give the test process its heap back
    assert len(seen) == 1
    assert seen[0] > 10_000, "modules, the application and the service are frozen"
