"""Benchmark: a simulated organisation of agents on 1, 2 and 3 servers sharing PostgreSQL.

One throwaway PostgreSQL (durable: fsync and synchronous commit on), an OIDC issuer (in
this process), and K real ``detente serve`` processes (``--auth oidc``, each on its own
port, all on the same database and the same git repository; a new database and repository
for every run). The load is :mod:`_fleet_load`'s: A agents renewing one claim each every
``--renew-seconds``, a share of them stopping so their leases expire, and ``--open-rate``
claim opens per second each completed or released ``--hold-seconds`` later.

Per (servers, agents) the table gives offered against achieved renewals/s and opens/s
(achieved: acknowledged, per second of the timed phase), p50/p99 latencies (ms, from
send to answer), 5xx and other failures, and CPU seconds over the timed phase: each
server process (its children included), PostgreSQL (the postmaster and every backend, from
``/proc``) and the generator (this process). Server and database CPU per operation:

- ``burst``: measured before the timed phase, with nothing else running: the renewing agents'
  claims opened (8 at a time), then each renewed once (8 at a time): CPU / count;
- ``steady``: the timed phase's server CPU less its opens and closes at the burst's
  per-open cost, over its renewals (idle work included; docs/architecture.md sizes from both).

After every run the checks of :mod:`_fleet_checks` are printed (no acknowledged write
lost; expiries swept once), with the targets: renewals p99 <= 50 ms, opens p99 <= 100 ms,
no 5xx, nothing lost, expiries once.

Usage: ``python bench/fleet.py [--servers 1,2,3] [--agents 300,1000] [--duration 300]
[--renew-seconds 30] [--open-rate 2] [--hold-seconds 5] [--stale-share 0.02]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from _fleet_checks import Verdict, read_claims, read_expiries, settle, verdicts
from _fleet_load import Fleet, Plan, prepare_heads
from _servers import make_repo, spawn_server

from oidc_issuer import Issuer, running_issuer
from storage.servers import PostgresServer, postgres_bindir

AUDIENCE = "detente-fleet"
SRC = Path(__file__).resolve().parents[1] / "src"
TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and of its children it has waited for."""
    f = _stat(pid)
    return sum(int(x) for x in f[11:15]) / TICK


def tree_cpu_s(root: int) -> float:
    """``cpu_s`` of ``root`` plus that of every live process whose parent it is (the
    postmaster and its backends: an exited backend's time is in the postmaster's)."""
    total = cpu_s(root)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            f = _stat(int(entry.name))
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(f[1]) == root:
            total += sum(int(x) for x in f[11:15]) / TICK
    return total


def own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Cpu:
    """A CPU reading of every process of a run."""

    servers: list[float]
    postgres: float
    generator: float

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(
            [a - b for a, b in zip(self.servers, other.servers, strict=True)],
            self.postgres - other.postgres,
            self.generator - other.generator,
        )


def read_cpu(servers: list[subprocess.Popen[bytes]], pg: PostgresServer) -> Cpu:
    assert pg.proc is not None
    return Cpu([cpu_s(p.pid) for p in servers], tree_cpu_s(pg.proc.pid), own_cpu_s())


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def start_servers(
    count: int, repo: Path, url: str, issuer: Issuer, logs: Path
) -> list[tuple[subprocess.Popen[bytes], int]]:
    env = {
        **os.environ,
        "DETENTE_SIMILARITY": "lexical",
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [
        *(sys.executable, "-m", "detente", "serve", "--repo", str(repo), "--store", url),
        *("--auth", "oidc", "--oidc-issuer", issuer.url, "--oidc-audience", AUDIENCE),
        *("--log-level", "warning", "--port"),
    ]
    started = []
    for k in range(count):
        log = (logs / f"server{k}.log").open("wb")
        started.append(
            spawn_server(argv, f"detente serve #{k}", cwd=repo, env=env, stdout=log, stderr=log)
        )
    return started


@dataclass
class Row:
    servers: int
    agents: int
    seconds: float
    fleet: Fleet
    cpu: Cpu
    open_burst: tuple[float, float]  # server, postgres CPU ms per open
    renew_burst: tuple[float, float]  # server, postgres CPU ms per renewal
    checks: list[Verdict]


async def one_run(
    args: argparse.Namespace, pg: PostgresServer, issuer: Issuer, servers: int, agents: int
) -> Row:
    with tempfile.TemporaryDirectory(prefix="detente-fleet-") as tmp:
        repo = make_repo(Path(tmp))
        head = ["git", "rev-parse", "HEAD"]
        oid = subprocess.run(head, cwd=repo, check=True, capture_output=True, text=True)
        base = oid.stdout.strip()
        # Completions advance a branch of their own: every principal may integrate.
        (repo / "detente.toml").write_text('[roles]\nintegrate = ["*"]\n')
        opens = range(0, int(args.duration * args.open_rate) + 1, 2)
        plan = Plan(
            agents=agents,
            duration=args.duration,
            renew=args.renew_seconds,
            open_rate=args.open_rate,
            hold=args.hold_seconds,
            stale_share=args.stale_share,
            stale_ttl=args.stale_ttl,
            repo="repo",
            base_oid=base,
            heads=prepare_heads(repo, base, list(opens)),
        )
        life = int(args.duration) + 3600
        tokens = [issuer.token(f"fleet-{i}", aud=AUDIENCE, expires_in=life) for i in range(agents)]
        running = start_servers(servers, repo, pg.new_database(), issuer, Path(tmp))
        procs = [p for p, _ in running]
        fleet = Fleet(plan, [f"http://127.0.0.1:{port}" for _, port in running], tokens)
        try:
            for client, agent in zip(fleet.clients, fleet.agents, strict=False):
                (await client.get("/v1/repos", headers=agent.headers)).raise_for_status()
            c0 = read_cpu(procs, pg)
            renewing = await fleet.open_agents(stale=False)
            c1 = read_cpu(procs, pg)
            await fleet.renew_all_once()
            c2 = read_cpu(procs, pg)
            await fleet.open_agents(stale=True)
            c3 = read_cpu(procs, pg)
            seconds = await fleet.run()
            c4 = read_cpu(procs, pg)
            reader, headers = fleet.clients[-1], fleet.agents[0].headers
            stale = [a for a in fleet.agents if a.stale]
            await settle(reader, headers, stale, limit_s=args.stale_ttl + 60)
            checks = verdicts(
                fleet.agents,
                fleet.opened,
                await read_claims(reader, headers),
                await read_expiries(reader, headers),
                fleet.renewals_ended,
            )
        finally:
            await fleet.close()
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=30)
        opened, renewed = c1 - c0, c2 - c1
        return Row(
            servers,
            agents,
            seconds,
            fleet,
            c4 - c3,
            (sum(opened.servers) * 1000 / renewing, opened.postgres * 1000 / renewing),
            (sum(renewed.servers) * 1000 / renewing, renewed.postgres * 1000 / renewing),
            checks,
        )


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def print_row(row: Row, duration: float) -> None:
    t = row.fleet.tally
    renews, opens, closes = len(t.renew_ms), len(t.open_ms), len(t.close_ms)
    server_cpu = sum(row.cpu.servers)
    # Steady per-renewal CPU: the phase's server CPU less its opens and closes at the
    # burst's per-open cost (a close is counted as an open).
    steady = (server_cpu - (opens + closes) * row.open_burst[0] / 1000) / max(renews, 1) * 1000
    five = sum(t.server_errors.values())
    other = sum(t.other_errors.values())
    print(
        f"| {row.servers} | {row.agents:,} "
        f"| {t.renew_offered / duration:.1f} | {renews / duration:.1f} "
        f"| {t.open_offered / duration:.2f} | {opens / duration:.2f} "
        f"| {pct(t.renew_ms, 0.5):.1f} | {pct(t.renew_ms, 0.99):.1f} "
        f"| {pct(t.open_ms, 0.5):.1f} | {pct(t.open_ms, 0.99):.1f} "
        f"| {pct(t.close_ms, 0.5):.1f} | {pct(t.lag_ms, 0.99):.1f} | {five} | {other} "
        f"| {' + '.join(f'{s:.1f}' for s in row.cpu.servers)} | {row.cpu.postgres:.1f} "
        f"| {row.cpu.generator:.1f} "
        f"| {row.renew_burst[0]:.2f} / {steady:.2f} | {row.renew_burst[1]:.2f} "
        f"| {row.open_burst[0]:.2f} | {row.open_burst[1]:.2f} |",
        flush=True,
    )


def print_checks(row: Row) -> None:
    t = row.fleet.tally
    met = [
        ("renewals p99 <= 50 ms", pct(t.renew_ms, 0.99) <= 50),
        ("opens p99 <= 100 ms", pct(t.open_ms, 0.99) <= 100),
        ("no 5xx", not t.server_errors),
        ("achieved >= 99 % of offered renewals", len(t.renew_ms) >= 0.99 * t.renew_offered),
        *((v.name, v.ok) for v in row.checks),
    ]
    print(f"\n{row.servers} server(s), {row.agents:,} agents ({row.seconds:.0f} s):")
    for name, ok in met:
        print(f"  {'ok ' if ok else 'MISSED'} {name}")
    for v in row.checks:
        if not v.ok:
            print(f"    {v.detail}")
    if t.slow:
        seconds = sorted({int(at) for at, _, _ in t.slow})
        print(f"  answers over 50 ms: {len(t.slow)}, in seconds {seconds[:20]} of the phase")
    for what, counts in (("5xx", t.server_errors), ("other failures", t.other_errors)):
        if counts:
            print(f"  {what}: {dict(counts)}")
    print(flush=True)


HEADER = (
    "| servers | agents | renew/s offered | renew/s achieved | opens/s offered "
    "| opens/s achieved | renew p50 ms | renew p99 ms | open p50 ms | open p99 ms "
    "| close p50 ms | generator lag p99 ms | 5xx | other errors | server CPU s | PostgreSQL CPU s "
    "| generator CPU s | server CPU ms/renewal (burst / steady) | PostgreSQL CPU ms/renewal "
    "| server CPU ms/open | PostgreSQL CPU ms/open |\n"
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:"
    "|---:|---:|---:|---:|"
)


async def main_async(args: argparse.Namespace) -> None:
    bindir = postgres_bindir()
    if bindir is None:
        raise SystemExit("PostgreSQL (initdb) is not installed")
    pg = PostgresServer(bindir, durable=True).start()
    rows: list[Row] = []
    try:
        with running_issuer("EdDSA") as issuer:
            for agents in [int(a) for a in args.agents.split(",")]:
                for servers in [int(s) for s in args.servers.split(",")]:
                    print(f"-- {servers} server(s), {agents:,} agents; load {_load()}", flush=True)
                    row = await one_run(args, pg, issuer, servers, agents)
                    rows.append(row)
                    print_checks(row)
    finally:
        pg.close()
    print(
        f"Load: renew every {args.renew_seconds:g} s, {args.open_rate:g} opens/s held "
        f"{args.hold_seconds:g} s, {args.stale_share:.0%} stale agents (lease "
        f"{args.stale_ttl} s), {args.duration:g} s timed; load average after {_load()}\n"
    )
    print(HEADER)
    for row in rows:
        print_row(row, args.duration)
    print(
        f"\nmedian generator lag over all runs: "
        f"{statistics.median(x for r in rows for x in r.fleet.tally.lag_ms):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", default="1,2,3")
    parser.add_argument("--agents", default="300,1000")
    parser.add_argument("--duration", type=float, default=300.0)
    parser.add_argument("--renew-seconds", type=float, default=30.0)
    parser.add_argument("--open-rate", type=float, default=2.0)
    parser.add_argument("--hold-seconds", type=float, default=5.0)
    parser.add_argument("--stale-share", type=float, default=0.02)
    parser.add_argument("--stale-ttl", type=int, default=10)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
