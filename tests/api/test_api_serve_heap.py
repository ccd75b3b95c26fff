"""``serve`` freezes the heap once the server has started (after the lifespan's warm-up),
so full collections skip what lives as long as the process (their pauses showed in the
event stream's p99)."""

from __future__ import annotations

import gc
import logging

import pytest
import uvicorn

from detente.clock import FakeClock
from detente.server import serve
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore


def test_serve_freezes_the_heap_after_startup_and_before_serving(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service = Service(MemoryStore(), FakeClock(), [RepoConfig("demo")])
    frozen_when_serving: list[int] = []

    async def main_loop(self: uvicorn.Server) -> None:  # serve nothing: shut down at once
        frozen_when_serving.append(gc.get_freeze_count())
        self.should_exit = True

    monkeypatch.setattr(uvicorn.Server, "main_loop", main_loop)
    loggers = [logging.getLogger(name) for name in ("detente", "uvicorn")]
    saved = [(lg, list(lg.handlers), lg.level, lg.propagate) for lg in loggers]
    gc.unfreeze()
    try:
        serve(service, port=0, log_level="warning")  # real start-up: lifespan, socket
    finally:
        gc.unfreeze()  # give the test process its heap back
        for logger, handlers, level, propagate in saved:  # and its logging (caplog)
            logger.handlers[:] = handlers
            logger.setLevel(level)
            logger.propagate = propagate
    assert len(frozen_when_serving) == 1
    assert frozen_when_serving[0] > 10_000, "modules, the app and the service are frozen"
