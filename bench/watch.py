"""Benchmark: delay from commit to delivery on the SSE stream with up to 1,000 subscribers.

A detente server runs in a subprocess (SQLite store, served as ``detente serve`` serves
it). N subscribers connect to ``/v1/events/stream`` from reader processes of their own
(``_sse_readers.py``: one ``epoll`` loop over raw sockets that parses only the ``id:``
lines, a few microseconds per delivery, so the readers are not what is measured;
``--reader-processes`` spreads them). Once the server is quiet (its set-up of the streams
done), this process opens claims at a steady pace over HTTP. For every delivered event the
delay is the arrival time minus the event's ``at`` (recorded inside the committing
transaction, same machine clock; read back once from ``GET /v1/events``). Reported per N:
events delivered, p50 and p99 delay, and the ratio against the 1-subscriber run measured
first in the same process (the baseline), the server's CPU time per subscriber while they
connect, and its CPU time per delivery while the events flow, beyond that baseline
(``/proc`` of the server process: what each further subscriber costs per event).

Usage: ``python bench/watch.py [--subscribers 1,100,1000] [--claims 50] [--rate 10]
[--reader-processes 1]`` (``--rate``: claims per second; each claim is two events, committed
together). "client CPU s" is the reader processes' CPU time.
"""

from __future__ import annotations

import argparse
import array
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import httpx
from _servers import spawn_server

_SERVER = """
import sys
from detente.clock import SystemClock
from detente.server import serve
from detente.service import RepoConfig, Service
from detente.storage.factory import open_store
service = Service(open_store(sys.argv[1]), SystemClock(), [RepoConfig("demo")])
serve(service, port=int(sys.argv[2]), log_level="warning")
"""


def _claim(n: int) -> dict[str, object]:
    return {
        "repo": "demo",
        "objective": f"bench claim {n}",
        "baseCommit": "a" * 40,
        "paths": [f"bench/{n}.py"],
        "leaseTtlSeconds": 600,
        "agent": {"id": "bench", "name": "bench"},
    }


def _readers(
    port: int, first: int, last: int, subscribers: int, processes: int, tmp: str
) -> list[tuple[subprocess.Popen[str], str]]:
    """Start ``subscribers`` streams in ``processes`` reader processes (``_sse_readers.py``)
    and wait until every stream's response has begun."""
    script = str(Path(__file__).with_name("_sse_readers.py"))
    started = []
    for i in range(processes):
        count = subscribers // processes + (i < subscribers % processes)
        if not count:
            continue
        out = f"{tmp}/arrivals-{first}-{i}.bin"
        argv = [sys.executable, script, str(port), str(first - 1), str(last), str(count), out]
        started.append((subprocess.Popen(argv, stdout=subprocess.PIPE, text=True), out))
    for proc, _ in started:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("a reader process failed to connect")
    return started


def _run(
    base: str,
    port: int,
    pid: int,
    subscribers: int,
    claims: int,
    rate: float,
    first: int,
    processes: int,
    tmp: str,
) -> tuple[list[float], float, float, float]:
    """Delays (seconds) of every delivery of events ``first .. first + 2*claims - 1``, the
    server's CPU seconds while the subscribers connected and while the events flowed, and
    the reader processes' CPU seconds."""
    last = first + 2 * claims - 1
    connect_cpu = _cpu_seconds(pid)
    readers = _readers(port, first, last, subscribers, processes, tmp)
    _settle(pid)  # every stream answered and the server has taken them all in
    events_cpu = _cpu_seconds(pid)
    connect_cpu = events_cpu - connect_cpu
    with httpx.Client(base_url=base, timeout=30) as http:
        t0 = time.perf_counter()
        for n in range(claims):
            http.post("/v1/claims", json=_claim(first + n))
            pause = t0 + (n + 1) / rate - time.perf_counter()
            if pause > 0:
                time.sleep(pause)  # pacing the load, not waiting for a result
    client_cpu = 0.0
    arrivals = array.array("d")
    for proc, out in readers:
        stdout, _ = proc.communicate(timeout=300)
        if proc.returncode:
            raise RuntimeError("a reader process failed")
        client_cpu += float(stdout.split()[-1])
        with open(out, "rb") as f:
            arrivals.frombytes(f.read())
    events_cpu = _cpu_seconds(pid) - events_cpu
    with httpx.Client(base_url=base, timeout=30) as http:
        page = http.get("/v1/events", params={"since": first - 1, "limit": 2 * claims}).json()
    at = {
        e["seq"]: datetime.fromisoformat(e["at"].replace("Z", "+00:00")).timestamp()
        for e in page["events"]
    }
    delays = [arrivals[i + 1] - at[int(arrivals[i])] for i in range(0, len(arrivals), 2)]
    assert len(delays) == subscribers * 2 * claims, "every subscriber gets every event"
    return delays, connect_cpu, events_cpu, client_cpu


def _settle(pid: int, timeout: float = 10.0) -> None:
    """Wait (at most ``timeout`` seconds) until the server process uses under 5 % of a core
    for 0.2 s: the streams' set-up (tasks, log reads, a full collection of the grown heap)
    has ended, so the events measure the fan-out of a steady server, not its connecting."""
    deadline = time.monotonic() + timeout
    quiet = 0
    while quiet < 2 and time.monotonic() < deadline:
        before = _cpu_seconds(pid)
        time.sleep(0.1)  # sampling the server's CPU, not waiting for a result
        quiet = quiet + 1 if _cpu_seconds(pid) - before < 0.005 else 0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", default="1,100,1000")
    parser.add_argument("--claims", type=int, default=50)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument(
        "--reader-processes", type=int, default=1, help="processes the subscribers share"
    )
    args = parser.parse_args()
    sizes = [int(x) for x in args.subscribers.split(",")]
    if sizes[0] != 1:
        sizes.insert(0, 1)

    tmp = tempfile.mkdtemp(prefix="detente-watch-")
    url = f"sqlite:///{tmp}/watch.db"
    proc, port = spawn_server([sys.executable, "-c", _SERVER, url], "detente server")
    try:
        base = f"http://127.0.0.1:{port}"
        print(
            f"SSE commit-to-delivery delay, {args.claims} claims ({2 * args.claims} events) "
            f"at {args.rate:g} claims/s, server in a subprocess (SQLite), 2 cores; "
            f"load average {_load()}\n"
        )
        print(
            f"{'subscribers':>11}{'deliveries':>12}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
            "  p50 / p99 vs 1 sub  connect ms/sub  events CPU s  client CPU s"
            "  server us/delivery"
        )
        # Warm-up, not reported: the first claim openings pay one-time costs (imports, the
        # similarity model, caches) that would otherwise inflate the 1-subscriber baseline
        # and so understate what each further subscriber costs.
        _run(base, port, proc.pid, 1, 20, args.rate, 1, 1, tmp)
        first, baseline, base_cpu = 41, None, None
        for n in sizes:
            delays, connect_cpu, events_cpu, client_cpu = _run(
                base,
                port,
                proc.pid,
                n,
                args.claims,
                args.rate,
                first,
                args.reader_processes,
                tmp,
            )
            first += 2 * args.claims
            ms = sorted(d * 1000 for d in delays)
            p50, p99 = statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.99))]
            if baseline is None or base_cpu is None:
                baseline, base_cpu = (p50, p99), (events_cpu, len(ms))
            ratio = f"{p50 / baseline[0]:6.1f}x {p99 / baseline[1]:6.1f}x"
            # Server CPU per delivery while the events flowed, beyond the 1-subscriber run
            # (which pays for the writes themselves): what one more subscriber costs per
            # event. Connecting (HTTP, routing, the replay) is the column before.
            extra = len(ms) - base_cpu[1]
            per = f"{(events_cpu - base_cpu[0]) / extra * 1e6:>10.1f}" if extra else "         -"
            print(
                f"{n:>11}{len(ms):>12}{p50:>9.2f}{p99:>9.2f}{ms[-1]:>9.2f}  {ratio}"
                f"{connect_cpu / n * 1000:>16.2f}{events_cpu:>14.2f}{client_cpu:>14.1f}"
                f"          {per}"
            )
        print(f"\nload average after the run: {_load()}")
    finally:
        proc.terminate()
        proc.wait(timeout=15)


if __name__ == "__main__":
    main()
