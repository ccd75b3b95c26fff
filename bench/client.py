"""Benchmark: what one client call costs, in-process against the old ASGI round trip.

Before the one-client restructuring, the CLI's local mode drove the whole FastAPI app
in-process through ``starlette.testclient`` (JSON encoding, ASGI routing, the thread
portal). :class:`~detente.client.inprocess.InProcessClient` now calls the service
directly. This bench measures, in the same run on the same service (SQLite store in a
temporary git repository with N live claims):

- ``inprocess``: ``InProcessClient`` (the local mode of today);
- ``asgi``: the same calls through ``TestClient`` over the app (the old local mode;
  kept here as the baseline only);
- ``http``: ``HttpClient`` to a real uvicorn server on loopback (server mode).

Operations: ``get_claim`` (a read with overlaps recomputed) and ``renew`` (a write with
expected revisions). Times are medians per call in milliseconds.

Usage: ``python bench/client.py [--sizes 10,200] [--calls 100]``
"""

from __future__ import annotations

import argparse
import functools
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from _servers import make_repo
from starlette.testclient import TestClient

from detente.client import Client
from detente.client.base import Call
from detente.client.http import HttpClient
from detente.client.inprocess import InProcessClient
from detente.runtime import build_service
from detente.server import build_app


def _seed(i: int) -> dict[str, Any]:
    return {
        "repo": "repo",
        "objective": f"claim {i}",
        "baseCommit": "HEAD",
        "paths": [f"src/pkg{i}/**", f"docs/{i}.md"],
        "leaseTtlSeconds": 3600,
    }


class _AsgiClient(InProcessClient):
    """The old local mode: every call through the HTTP app with ``TestClient``."""

    def __init__(self, test_client: TestClient, service: Any) -> None:
        super().__init__(service)
        self.http = HttpClient(test_client)  # TestClient is an httpx.Client at run time

    def _send(self, call: Call) -> dict[str, Any]:
        return self.http._send(call)


def _timed_ns(fn: Callable[[], object]) -> int:
    start = time.perf_counter_ns()
    fn()
    return time.perf_counter_ns() - start


def _renewal(client: Client, claim_id: str) -> Callable[[], object]:
    """A renewal naming the revisions just read (the read is not part of the timing)."""
    claim = client.get_claim(claim_id)["claim"]
    return lambda: client.renew(
        claim_id,
        expected_lease_revision=claim["lease"]["revision"],
        expected_claim_revision=claim["revision"],
        ttl_seconds=3600,
    )


def _measure(
    clients: dict[str, Client], claim_id: str, calls: int
) -> dict[str, tuple[float, float]]:
    """Median ms per call; the clients take turns call by call (after a warm-up), so a
    load spike on this shared machine hits all of them alike."""
    reads: dict[str, list[int]] = {n: [] for n in clients}
    writes: dict[str, list[int]] = {n: [] for n in clients}
    for turn in range(calls + 5):
        for name, client in clients.items():
            read = _timed_ns(functools.partial(client.get_claim, claim_id))
            write = _timed_ns(_renewal(client, claim_id))
            if turn >= 5:
                reads[name].append(read)
                writes[name].append(write)
    return {
        n: (statistics.median(reads[n]) / 1e6, statistics.median(writes[n]) / 1e6) for n in clients
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,200")
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    print("| live claims | client | get_claim ms | renew ms | vs inprocess (get / renew) |")
    print("|---:|---|---:|---:|---:|")
    for size in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            repo = make_repo(Path(tmp))
            service = build_service([repo], store_url=f"sqlite:///{tmp}/detente.db")
            local = InProcessClient(service)
            ids = [local.open_claim(_seed(i))["claim"]["id"] for i in range(size)]
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            config = uvicorn.Config(build_app(service), log_level="error", lifespan="off")
            server = uvicorn.Server(config)
            thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
            thread.start()
            while not server.started:
                time.sleep(0.01)
            clients: dict[str, Client] = {
                "inprocess": local,
                "asgi": _AsgiClient(TestClient(build_app(service)), service),
                "http": HttpClient(httpx.Client(base_url=f"http://127.0.0.1:{port}")),
            }
            results = _measure(clients, ids[-1], args.calls)
            base = results["inprocess"]
            for name, (read, write) in results.items():
                ratio = f"{read / base[0]:.1f}x / {write / base[1]:.1f}x"
                print(f"| {size} | {name} | {read:.2f} | {write:.2f} | {ratio} |")
            server.should_exit = True
            thread.join(timeout=10)
            service.store.close()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
