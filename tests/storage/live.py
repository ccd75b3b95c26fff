"""Serve a Service over real HTTP in a background thread; parse SSE; wait with a bound."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import uvicorn

from detente.api.app import create_app
from detente.service import Service
from storage.servers import free_port


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@contextmanager
def serving(service: Service, *, sweep_interval: float | None = None) -> Iterator[str]:
    """Serve ``service`` until the block exits; yields its base URL."""
    port = free_port()
    app = create_app(service, sweep_interval=sweep_interval)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = _Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    assert server.ready.wait(timeout=10), "server did not start within 10 s"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def parse_sse(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """SSE lines -> messages ``{id, event, data}``; comment lines become ``{":": text}``."""
    message: dict[str, str] = {}
    for line in lines:
        if not line:
            if message:
                yield message
            message = {}
        elif line.startswith(":"):
            yield {":": line[1:].strip()}
        else:
            key, _, value = line.partition(":")
            message[key] = value[1:] if value.startswith(" ") else value
    if message:
        yield message


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Re-check ``predicate`` every 10 ms until it holds; fail after ``timeout`` seconds."""
    tick = threading.Event()
    for _ in range(int(timeout * 100)):
        if predicate():
            return
        tick.wait(0.01)
    assert predicate(), f"timed out after {timeout} s waiting until {what}"
