"""Serve a Service over real HTTP in a background thread; parse SSE; wait with a bound."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from detente.api.app import create_app
from detente.service import Service
from threaded_server import serve_in_thread


@contextmanager
def serving(service: Service, *, sweep_interval: float | None = None) -> Iterator[str]:
    """Serve ``service`` until the block exits; yields its base URL."""
    with serve_in_thread(create_app(service, sweep_interval=sweep_interval)) as base:
        yield base


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
