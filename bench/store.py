"""Benchmark: CAS lease renewals through the service on SQLite, PostgreSQL and etcd.

Each of N concurrent clients (threads) holds one claim and renews its lease in a loop,
presenting the expected lease and claim revisions (``Service.claims.renew``: catch up, decide,
append with the stream CAS, project; commands waiting on the repository are group-committed
into one store transaction). Reported per backend and N: operations, throughput, p50 and
p99 latency, renewals per store transaction (``cmds/txn``), CPU time of the benchmark
process per operation (every thread: the service, or the raw client), and two ratios
against the reference: throughput (detente / raw; targets PostgreSQL >= 1.0x, etcd >= 0.5x) and p50
latency (detente / raw). The physical reference, measured in
the same run: raw etcd ``Txn`` puts with a ``mod_revision`` compare through the same
client library (aetcd), one key per client, N concurrent tasks; ratios are against it.
With PostgreSQL chosen, a second row shows its own floor on the same server: raw
``UPDATE ... WHERE rev = expected`` statements, one row and one connection per client
thread (ratio also against raw etcd), and the detente PostgreSQL row gains a last
column, its throughput against that floor (``ops/s vs raw PG``; target >= 0.5x at 16
clients).

Servers are throwaway (``tests/storage/servers.py``): PostgreSQL 15 with its durable
defaults (fsync, synchronous commit) and a 3-member etcd cluster on 127.0.0.1, data in a
temporary directory. SQLite runs with ``synchronous=FULL``.

Usage: ``python bench/store.py [--clients 1,16,64] [--ops 1920] [--backends sqlite,...]
[--repeat 3]`` (``--ops``: operations per run, split across the clients; each row is the
run of median throughput among ``--repeat`` runs, interleaved with the reference's so a
load spike on a shared machine hits both alike). Prints a Markdown
table (README "Performance").
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
# Renewals never compare objectives: without this the first claims opened would start the
# semantic model's load in a background thread, whose CPU would land in the first timed run.
os.environ.setdefault("DETENTE_SIMILARITY", "lexical")

import aetcd
import psycopg

from detente.domain.claims.commands import OpenClaim, RenewLease
from detente.domain.claims.model import Agent
from detente.service import RepoConfig, Service
from detente.storage.clock import default_clock
from detente.storage.factory import open_store
from storage.servers import EtcdCluster, PostgresServer, postgres_bindir

#: ops, wall s, latencies (s), cmds per txn, CPU seconds of this process while they ran
Result = tuple[int, float, list[float], float, float]


def _median_run(runs: list[Result]) -> Result:
    """The run with the median throughput (of an odd number, the middle one)."""
    return sorted(runs, key=lambda r: r[0] / r[1])[len(runs) // 2]


def _renewals(url: str, clients: int, per_client: int) -> Result:
    store = open_store(url)
    service = Service(store, default_clock(store), [RepoConfig("bench")])
    claims = [
        service.claims.open_claim(
            OpenClaim(
                repo="bench",
                objective=f"client {i}",
                base_commit="a" * 40,
                agent=Agent(f"c{i}", f"c{i}"),
                lease_ttl_seconds=600,
                paths=(f"c{i}/**",),
            )
        ).claim
        for i in range(clients)
    ]
    latencies: list[list[float]] = [[] for _ in range(clients)]
    start = threading.Barrier(clients + 1)

    def client(i: int) -> None:
        claim = claims[i]
        start.wait()
        for _ in range(per_client):
            t0 = time.perf_counter()
            claim = service.claims.renew(
                RenewLease(claim.id, claim.lease.revision, claim.revision, 600)
            ).claim
            latencies[i].append(time.perf_counter() - t0)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    batches, commands = service.group_commit.batches, service.group_commit.commands
    start.wait()
    t0, cpu = time.perf_counter(), time.process_time()
    for t in threads:
        t.join()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu
    per_txn = (service.group_commit.commands - commands) / max(
        1, service.group_commit.batches - batches
    )
    assert service.audit().ok
    store.close()
    return clients * per_client, wall, [x for per in latencies for x in per], per_txn, cpu


def _raw_etcd(port: int, clients: int, per_client: int) -> Result:
    async def run() -> Result:
        async with aetcd.Client(host="127.0.0.1", port=port) as client:
            keys = [f"/raw/{clients}/{i}".encode() for i in range(clients)]
            revisions = [(await client.put(k, b"0")).header.revision for k in keys]
            latencies: list[float] = []

            async def one(i: int) -> None:
                for n in range(per_client):
                    t0 = time.perf_counter()
                    ok, replies = await client.transaction(
                        compare=[client.transactions.mod(keys[i]) == revisions[i]],
                        success=[client.transactions.put(keys[i], str(n).encode())],
                        failure=[],
                    )
                    assert ok
                    revisions[i] = replies[0].response_put.header.revision
                    latencies.append(time.perf_counter() - t0)

            t0, cpu = time.perf_counter(), time.process_time()
            await asyncio.gather(*(one(i) for i in range(clients)))
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu
            return clients * per_client, wall, latencies, 1.0, cpu

    return asyncio.run(run())


def _raw_postgres(url: str, clients: int, per_client: int) -> Result:
    """The physical floor of PostgreSQL on this machine: each client thread, on its own
    connection, bumps its own row with ``UPDATE ... WHERE rev = expected`` (autocommit,
    durable: one WAL flush per statement, shared by concurrent commits)."""
    with psycopg.connect(url, autocommit=True) as setup:
        setup.execute("CREATE TABLE IF NOT EXISTS raw_cas (k INT PRIMARY KEY, rev INT NOT NULL)")
        setup.execute("TRUNCATE raw_cas")
        setup.execute("INSERT INTO raw_cas SELECT g, 0 FROM generate_series(0, %s) g", (clients,))
    conns = [psycopg.connect(url, autocommit=True) for _ in range(clients)]
    latencies: list[list[float]] = [[] for _ in range(clients)]
    start = threading.Barrier(clients + 1)

    def client(i: int) -> None:
        conn, rev = conns[i], 0
        start.wait()
        for _ in range(per_client):
            t0 = time.perf_counter()
            row = conn.execute(
                "UPDATE raw_cas SET rev = rev + 1 WHERE k = %s AND rev = %s RETURNING rev",
                (i, rev),
            ).fetchone()
            assert row is not None
            rev = row[0]
            latencies[i].append(time.perf_counter() - t0)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0, cpu = time.perf_counter(), time.process_time()
    for t in threads:
        t.join()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu
    for conn in conns:
        conn.close()
    return clients * per_client, wall, [x for per in latencies for x in per], 1.0, cpu


def _row(
    name: str, clients: int, result: Result, base: Result | None, pg: Result | None = None
) -> str:
    """One table row; ``base``: the raw etcd reference (None: this is it); ``pg``: the raw
    PostgreSQL row of the same size, for the PostgreSQL store's own ratio."""
    ops, wall, lat, per_txn, cpu = result
    lat_ms = sorted(x * 1000 for x in lat)
    p50 = statistics.median(lat_ms)
    p99 = lat_ms[min(len(lat_ms) - 1, int(len(lat_ms) * 0.99))]
    rate = ops / wall
    ratios = "  (reference) |"
    if base is not None:
        b_ms = statistics.median(x * 1000 for x in base[2])
        ratios = f"{rate / (base[0] / base[1]):8.2f}x | {p50 / b_ms:8.1f}x"
    own = f"{rate / (pg[0] / pg[1]):8.2f}x" if pg is not None else ""
    return (
        f"| {name:<18} | {clients:>7} | {ops:>5} | {rate:>7.0f} | {p50:>7.2f} | {p99:>7.2f} "
        f"| {per_txn:>8.1f} | {cpu / ops * 1e6:>7.0f} | {ratios} | {own:>8} |"
    )


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,16,64")
    parser.add_argument("--ops", type=int, default=1920)
    parser.add_argument("--backends", default="sqlite,postgresql,etcd")
    parser.add_argument(
        "--repeat", type=int, default=3, help="interleaved runs per row (the median is shown)"
    )
    args = parser.parse_args()
    sizes = [int(x) for x in args.clients.split(",")]
    chosen = args.backends.split(",")

    bindir, etcd = postgres_bindir(), shutil.which("etcd")
    if bindir is None or etcd is None:
        sys.exit("needs PostgreSQL (initdb) and etcd installed: see .ci/run")
    pg = PostgresServer(bindir, durable=True).start()
    cluster = EtcdCluster(etcd).start()
    tmp = Path(tempfile.mkdtemp(prefix="detente-bench-"))
    try:
        open_store(cluster.url("warmup")).close()  # wait for a leader
        backends: dict[str, Callable[[int], str]] = {
            # A fresh log per run on every store (a reused one would make later runs
            # catch up with and carry the earlier runs' claims).
            "sqlite": lambda run: f"sqlite:///{tmp}/bench{run}.db",
            "postgresql": lambda run: pg.new_database(),
            "etcd": lambda run: cluster.url(f"bench{run}"),
        }
        print(
            f"CAS lease renewals, {args.ops} operations per run, median of {args.repeat} "
            f"interleaved runs (2 cores, loopback; load average {_load()})\n"
        )
        print(
            "| backend            | clients |   ops |   ops/s |  p50 ms |  p99 ms | cmds/txn "
            "| CPU us/op | ops/s vs raw | p50 vs raw | ops/s vs raw PG |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        port = cluster.members[0].client_port
        raw_pg = pg.new_database()
        runs_made = 0
        for n in sizes:
            per_client = max(1, args.ops // n)
            runs: dict[str, list[Result]] = {"raw": []}
            for _ in range(args.repeat):  # interleaved: a load spike hits every row alike
                runs["raw"].append(_raw_etcd(port, n, per_client))
                if "postgresql" in chosen:
                    runs.setdefault("raw pg", []).append(_raw_postgres(raw_pg, n, per_client))
                for name, url in backends.items():
                    if name in chosen:
                        runs_made += 1
                        result = _renewals(url(runs_made), n, per_client)
                        runs.setdefault(name, []).append(result)
            base = _median_run(runs.pop("raw"))
            raw_pg_row = _median_run(runs["raw pg"]) if "raw pg" in runs else None
            print(_row("raw etcd Txn+CAS", n, base, None), flush=True)
            for name, results in runs.items():
                label = "raw PG UPDATE+CAS" if name == "raw pg" else f"detente {name}"
                own = raw_pg_row if name == "postgresql" else None
                print(_row(label, n, _median_run(results), base, own), flush=True)
        print(f"\nload average after the run: {_load()}")
    finally:
        cluster.close()
        pg.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
