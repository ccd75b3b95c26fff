"""Benchmark: what heartbeats leave behind, and what a long history costs a start and an audit.

Two tables, on SQLite and PostgreSQL (issue #32, "Heartbeats that cost what they change"):

1. **Bytes per renewal and per claim lifecycle**, through the service in process (a fake
   clock; every claim renews every 30 s). ``rows`` is this release: a renewal moves the
   claim's lease row and the log gets a ``lease.checkpoint`` per repository at most every
   ``Policy.lease_checkpoint_seconds`` (300 s); ``events`` is the previous design measured
   in the same run (the same service with its lease rows switched off: every renewal is a
   chained ``lease.renewed`` event). A lifecycle: open, 20 renewals (10 minutes), abandon.
   Bytes: SQLite's used pages (``page_count - freelist_count`` after a WAL checkpoint),
   PostgreSQL's ``pg_database_size`` after ``VACUUM FULL`` (the live rows: an update's
   old row version is space a plain ``VACUUM`` lets the table reuse, not growth); the
   last checkpoint is written before the second reading.
2. **After 10^4, 10^5 and 10^6 renewals** (``--claims-held`` claims renewing every 30 s)
   against an empty store and one holding only the claims, in the same run: the store's
   size, a server's start (``detente serve`` in a subprocess, from ``Popen`` to the first
   ``200`` of ``GET /v1/claims``; killed with SIGKILL so no start finds a snapshot; the
   median of ``--starts``, after one untimed start that compiles the bytecode) and
   ``audit verify`` in process, twice (the second run verifies only what the first has
   not: the verified head is kept in the store). The histories are
   built by the store's bulk path: the claims are opened through the service, then one
   store transaction per simulated 5 minutes writes what the service writes in that time
   (every claim's lease row moved on by ten revisions, one ``lease.checkpoint`` naming
   each lease, in events of 500), and a last transaction rewrites the claims' record rows.

Usage: ``python bench/log_growth.py [--backends sqlite,postgresql] [--claims 50]
[--rounds 100] [--sizes 10000,100000,1000000] [--claims-held 1000] [--starts 3]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
os.environ.setdefault("DETENTE_SIMILARITY", "lexical")

import httpx
import psycopg
from _servers import make_repo

from detente.clock import FakeClock, format_time
from detente.domain.claims.commands import OpenClaim, RenewLease, SetStatus
from detente.domain.claims.model import Agent, Claim, ClaimStatus
from detente.domain.events import LEASE_CHECKPOINT, lease_subject
from detente.eventlog.projections import rows_for
from detente.security.identity import SYSTEM
from detente.service import RepoConfig, Service
from detente.storage.base import LeaseRow, LeaseTx, NewEvent, Store
from detente.storage.factory import open_store
from storage.servers import PostgresServer, free_port, postgres_bindir

REPO = "repo"  # the name ``detente serve`` gives the repository at <tmp>/repo
PERIOD = 30  # seconds between two renewals of one claim
CHECKPOINT = 300  # Policy.lease_checkpoint_seconds (the default)
TTL = 7 * 24 * 3600  # the bulk histories' leases outlive the run (no start expires them)

_SERVER = """
import sys
from pathlib import Path
from detente.runtime import build_service
from detente.server import make_server
service = build_service([Path(sys.argv[1])], store_url=sys.argv[2])
make_server(service, port=int(sys.argv[3]), log_level="error").run()
"""


def _seed(i: int, ttl: int = 120) -> OpenClaim:
    return OpenClaim(
        repo=REPO,
        objective=f"agent {i} keeps its lease",
        base_commit="a" * 40,
        agent=Agent(f"a{i}", f"a{i}"),
        lease_ttl_seconds=ttl,
        paths=(f"work/{i}/**",),
    )


def _service(store: Store, clock: FakeClock, *, rows: bool = True) -> Service:
    service = Service(store, clock, [RepoConfig(REPO)])
    service.lease_rows = rows and service.lease_rows
    return service


def _renew(service: Service, claim: Claim, ttl: int = 120) -> Claim:
    cmd = RenewLease(claim.id, claim.lease.revision, claim.revision, ttl)
    return service.claims.renew(cmd).claim


def store_bytes(url: str) -> int:
    """Bytes the store holds (see the module docstring)."""
    if url.startswith("sqlite:///"):
        db = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            free = db.execute("PRAGMA freelist_count").fetchone()[0]
            size = db.execute("PRAGMA page_size").fetchone()[0]
            return int((pages - free) * size)
        finally:
            db.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM FULL")
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return int(row[0]) if row else 0


def _settle(service: Service, clock: FakeClock) -> None:
    """Write the last checkpoint (the renewals not yet named in the log)."""
    clock.advance(CHECKPOINT)
    service.sweep()


def per_renewal(url: str, *, rows: bool, claims: int, rounds: int) -> float:
    """Bytes the store grew by per renewal: ``claims`` claims renewed ``rounds`` times."""
    store, clock = open_store(url), FakeClock()
    service = _service(store, clock, rows=rows)
    held = [service.claims.open_claim(_seed(i)).claim for i in range(claims)]
    before = store_bytes(url)
    for _ in range(rounds):
        held = [_renew(service, c) for c in held]
        clock.advance(PERIOD)
    _settle(service, clock)
    grown = store_bytes(url) - before
    store.close()
    return grown / (claims * rounds)


def per_lifecycle(url: str, *, rows: bool, claims: int) -> float:
    """Bytes per claim lifecycle: open, 20 renewals 30 s apart, abandon."""
    store, clock = open_store(url), FakeClock()
    service = _service(store, clock, rows=rows)
    service.claims.open_claim(_seed(10_000))  # the schema and a first claim: not counted
    before = store_bytes(url)
    held = [service.claims.open_claim(_seed(i)).claim for i in range(claims)]
    for _ in range(20):
        clock.advance(PERIOD)
        held = [_renew(service, c) for c in held]
    for c in held:
        service.claims.set_status(SetStatus(c.id, c.revision, ClaimStatus.ABANDONED, "done"))
    _settle(service, clock)
    grown = store_bytes(url) - before
    store.close()
    return grown / claims


def build_history(url: str, *, claims: int, renewals: int) -> None:
    """``claims`` claims opened through the service, then ``renewals`` renewals written by
    the bulk path (one transaction per simulated 5 minutes; see the module docstring)."""
    store = open_store(url)
    clock = FakeClock(datetime.now(UTC))
    service = _service(store, clock)
    held = [service.claims.open_claim(_seed(i, TTL)).claim for i in range(claims)]
    per_period = CHECKPOINT // PERIOD  # renewals of one claim between two checkpoints
    revisions = {c.id: c.lease.revision for c in held}
    subject, checkpoints, done = lease_subject(REPO), 0, 0
    actor = SYSTEM.to_wire()
    while done < renewals:
        moves = min(per_period, max(1, (renewals - done) // claims))
        clock.advance(PERIOD * moves)
        at, entries, rows = format_time(clock.now()), [], []
        deadline = format_time(clock.now() + timedelta(seconds=TTL))
        for c in held:
            revisions[c.id] += moves
            rows.append(LeaseRow(c.id, REPO, c.lease.id, revisions[c.id], TTL, deadline, at))
            entries.append(
                {
                    "claimId": c.id,
                    "leaseId": c.lease.id,
                    "leaseRevision": revisions[c.id],
                    "ttlSeconds": TTL,
                    "expiresAt": deadline,
                }
            )
        with store.transaction(REPO) as tx:
            assert isinstance(tx, LeaseTx)
            tx.write_leases(rows)
            for start in range(0, len(entries), 500):
                data = {"leases": entries[start : start + 500], "actor": actor}
                event = NewEvent(
                    f"evt_bulk_{checkpoints}", LEASE_CHECKPOINT, 1, REPO, subject, data, at
                )
                tx.append([event], {subject: checkpoints})
                checkpoints += 1
        done += moves * claims
    state = _service(store, clock).fresh(REPO)
    with store.transaction(REPO) as tx:
        tx.upsert_records(rows_for(state, (f"claim/{c.id}" for c in held)))
    store.close()


def server_start(repo: Path, url: str) -> float:
    """Seconds from ``Popen`` of ``detente serve`` to the first answered ``GET /v1/claims``."""
    port = free_port()
    began = time.perf_counter()
    argv = [sys.executable, "-c", _SERVER, str(repo), url, str(port)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = began + 120
        while time.perf_counter() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"detente serve exited with {proc.returncode}")
            try:
                got = httpx.get(f"http://127.0.0.1:{port}/v1/claims?repo={REPO}", timeout=30)
                if got.status_code == 200:
                    return time.perf_counter() - began
            except httpx.TransportError:
                pass
            time.sleep(0.01)  # a bench polling a subprocess, not a test
        raise RuntimeError("detente serve did not answer within 120 s")
    finally:
        proc.kill()  # no clean shutdown: no snapshot for the next start
        proc.wait()


def audit_twice(url: str) -> tuple[float, float, bool]:
    """``(seconds of a first audit verify, of a second one, both ok)``, in process."""
    store = open_store(url)
    service = _service(store, FakeClock(datetime.now(UTC)))
    began = time.perf_counter()
    first = service.audit()
    middle = time.perf_counter()
    second = service.audit()
    ended = time.perf_counter()
    store.close()
    return middle - began, ended - middle, first.ok and second.ok


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--claims", type=int, default=50, help="claims renewing (table 1)")
    parser.add_argument("--rounds", type=int, default=100, help="renewals per claim (table 1)")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--claims-held", type=int, default=1000, help="claims (table 2)")
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    chosen = args.backends.split(",")
    sizes = [int(x) for x in args.sizes.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="detente-growth-"))
    pg: PostgresServer | None = None
    runs = iter(range(1, 10**6))
    try:
        urls: dict[str, Callable[[], str]] = {}
        if "sqlite" in chosen:
            urls["sqlite"] = lambda: f"sqlite:///{tmp}/growth{next(runs)}.db"
        if "postgresql" in chosen:
            bindir = postgres_bindir()
            if bindir is None:
                sys.exit("PostgreSQL (initdb) is not installed: see .ci/run")
            pg = PostgresServer(bindir).start()
            urls["postgresql"] = pg.new_database
        repo = make_repo(tmp)

        print(f"## Bytes per renewal ({args.claims} claims x {args.rounds} renewals, 30 s apart)")
        print("and per claim lifecycle (open, 20 renewals, abandon)\n")
        print("| backend | design | bytes/renewal | bytes/lifecycle |")
        print("|---|---|---:|---:|")
        for name, url in urls.items():
            for design, rows in (("events (before)", False), ("rows", True)):
                renewal = per_renewal(url(), rows=rows, claims=args.claims, rounds=args.rounds)
                lifecycle = per_lifecycle(url(), rows=rows, claims=args.claims)
                print(f"| {name} | {design} | {renewal:,.1f} | {lifecycle:,.0f} |", flush=True)

        print(f"\n## A long history ({args.claims_held:,} claims renewing every 30 s)\n")
        print(
            "| backend | renewals | store MB | start s (median) | start vs empty "
            "| audit s | again s | audit ok |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for name, url in urls.items():
            empty_url = url()
            open_store(empty_url).close()
            server_start(repo, empty_url)  # untimed: bytecode, page cache
            empty = statistics.median(server_start(repo, empty_url) for _ in range(args.starts))
            first, again, ok = audit_twice(empty_url)
            print(
                f"| {name} | empty store | {_mb(store_bytes(empty_url))} | {empty:.2f} | 1.00x "
                f"| {first:.2f} | {again:.2f} | {ok} |",
                flush=True,
            )
            for renewals in [0, *sizes]:
                at = url()
                build_history(at, claims=args.claims_held, renewals=renewals)
                start = statistics.median(server_start(repo, at) for _ in range(args.starts))
                first, again, ok = audit_twice(at)
                print(
                    f"| {name} | {renewals:,} | {_mb(store_bytes(at))} | {start:.2f} "
                    f"| {start / empty:.2f}x | {first:.2f} | {again:.2f} | {ok} |",
                    flush=True,
                )
    finally:
        if pg is not None:
            pg.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
