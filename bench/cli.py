"""Benchmark: wall time of one ``detente`` command, against ``git status`` and ``python -c pass``.

Agents run ``detente claim status`` before and after every edit, so the whole process is
timed: interpreter start, imports, opening the store, catching up with the log, the read,
the JSON output. For each size (events in the repository's SQLite store: 100 live claims,
then lease renewals up to the size) every command runs ``--runs`` times, the commands
taking turns run by run so that a load spike on this shared machine hits all of them
alike. Reported per command: the median and the best wall time, the median CPU time
(user + system, of the child; robust to other load on the machine) and the ratios of the
median wall and CPU times to those of the ``python -c pass`` baseline of the same run.

Every command runs with its bytecode cached (``PYTHONPYCACHEPREFIX`` in a temporary
directory, written by the warm-up round), as an installed package has it.

Commands (local mode, ``DETENTE_LOCAL=1``, in the repository):

- ``python -c pass``: the interpreter alone (baseline);
- ``git status``: what an agent already pays per tool use (baseline);
- ``detente --help``: target <= 0.10 s;
- ``detente claim status ID --json``: target <= 0.15 s at 10,000 events;
- ``detente claim list --json``: every claim (100);
- ``detente claim status ID --json`` without ``DETENTE_LOCAL`` and with no server running:
  what a user pays by default (the probe of ``127.0.0.1:7420`` finds nothing, then local
  mode; skipped when something listens there);
- ``detente claim status ID --json`` against ``detente serve`` on the same store
  (``DETENTE_URL``): server mode.

A second table (``--tables claim-open``) times ``detente claim open`` in local mode on a
repository of 5,053 files (ansible's paths, ``../shared/data/ansible-paths.txt``, one
short line each): with its worktree (the service creates branch and worktree inside the
command) against ``git worktree add --lock -b`` of the same commit in the same run
(target: at most 1.5x), and with ``--no-worktree`` (target: at most 0.25 s). The
commands take turns run by run, each going first in turn, after an untimed ``sync`` (a
checkout's dirty pages must not slow down the next one); the worktrees are removed
between runs, untimed. (The ansible list holds 5,053 paths; 5,050 files result, three
paths being both a file and a directory's prefix or duplicates.)

Usage: ``python bench/cli.py [--sizes 100,10000] [--runs 15] [--tables status,claim-open]``
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _servers import make_repo, spawn_server

from detente.client.connect import open_local

_DETENTE = [sys.executable, "-c", "from detente.cli.main import main; main()"]
_CLAIMS = 100
_TARGETS = {"--help": 0.10, "claim status": 0.15}
_PATHS = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ansible-paths.txt"


def _seed(repo: Path, events: int) -> str:
    """Open ``_CLAIMS`` claims, then renew them in turn until the log holds ``events``."""
    client = open_local(repo)
    try:
        ids = []
        for i in range(_CLAIMS):
            body = {
                "repo": "repo",
                "objective": f"bench claim {i}",
                "baseCommit": "HEAD",
                "paths": [f"src/pkg{i}/**", f"docs/{i}.md"],
                "leaseTtlSeconds": 36000,
            }
            ids.append(client.open_claim(body)["claim"]["id"])
        head = int(client.health()["head"])
        started, turn = time.monotonic(), 0
        revisions = {i: client.get_claim(i, include=[])["claim"] for i in ids}
        while head < events:
            claim = revisions[ids[turn % len(ids)]]
            renewed = client.renew(
                claim["id"],
                expected_lease_revision=claim["lease"]["revision"],
                expected_claim_revision=claim["revision"],
                ttl_seconds=36000,
            )["claim"]
            revisions[claim["id"]] = renewed
            head, turn = head + 1, turn + 1
            if turn % 1000 == 0:
                rate = turn / (time.monotonic() - started)
                print(f"  seeded {head}/{events} events ({rate:.0f}/s)", file=sys.stderr)
        return str(ids[0])
    finally:
        client.close()


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and child CPU seconds (user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _big_repo(root: Path) -> Path:
    """``root/big``: one commit of every path of ``ansible-paths.txt`` (5,053 files)."""
    repo = root / "big"
    repo.mkdir()
    for line in _PATHS.read_text().splitlines():
        if line.strip():
            path = repo / line
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{line}\n")
    ident = ["-c", "user.name=b", "-c", "user.email=b@b"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], [*ident, "commit", "-q", "-m", "i"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _drop_worktrees(repo: Path) -> None:
    """Remove every linked worktree and its branch (untimed, between runs)."""
    for line in _git(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree ") and Path(line[9:]) != repo:
            _git(repo, "worktree", "remove", "--force", "--force", line[9:])
    for branch in _git(repo, "branch", "--format=%(refname:short)").splitlines():
        if branch != "main":
            _git(repo, "branch", "-q", "-D", branch)


def claim_open_table(env: dict[str, str], runs: int) -> None:
    """The second table of the module docstring."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = _big_repo(Path(tmp))
        files = len(_git(repo, "ls-files").splitlines())
        oid = _git(repo, "rev-parse", "HEAD")
        walls: dict[str, list[float]] = {}
        cpus: dict[str, list[float]] = {}
        for run in range(runs + 1):
            commands = {
                "python -c pass": [sys.executable, "-c", "pass"],
                "git worktree add --lock -b B DIR OID": [
                    "git", "worktree", "add", "-q", "--lock", "-b", f"bench/{run}",
                    f"{tmp}/git-{run}", oid,
                ],
                "detente claim open (worktree)": [
                    *_DETENTE, "claim", "open", "-o", f"bench {run}", "-p", f"w/{run}/**",
                    "--ttl", "3600", "--json",
                ],
                "detente claim open --no-worktree": [
                    *_DETENTE, "claim", "open", "-o", f"bench nw {run}", "-p", f"n/{run}/**",
                    "--ttl", "3600", "--no-worktree", "--json",
                ],
            }  # fmt: skip
            names = list(commands)
            turn = run % len(names)  # each command goes first in turn: no order bias
            for name in names[turn:] + names[:turn]:
                # Dirty pages of the previous checkout would be flushed during the next
                # one: each starts from written-back state.
                os.sync()
                wall, cpu = _timed(commands[name], repo, env)
                if run:  # the first round warms the page cache and the .pyc files
                    walls.setdefault(name, []).append(wall)
                    cpus.setdefault(name, []).append(cpu)
            _drop_worktrees(repo)
            print(f"  claim open run {run}/{runs}", file=sys.stderr)
        base = statistics.median(walls["git worktree add --lock -b B DIR OID"])
        print()
        print(f"claim open on {files} files, load {os.getloadavg()[0]:.1f} after the runs")
        print()
        print(
            "| files | command | median s | best s | median CPU s | vs git worktree add | target |"
        )
        print("|---:|---|---:|---:|---:|---:|---|")
        targets = {
            "detente claim open (worktree)": "<= 1.5x git worktree add",
            "detente claim open --no-worktree": "<= 0.25 s",
        }
        for name in walls:
            median = statistics.median(walls[name])
            print(
                f"| {files} | `{name}` | {median:.3f} | {min(walls[name]):.3f} | "
                f"{statistics.median(cpus[name]):.3f} | {median / base:.2f}x | "
                f"{targets.get(name, '')} |"
            )
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,10000")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tables", default="status,claim-open")
    args = parser.parse_args()
    tables = set(args.tables.split(","))
    env = {**os.environ, "DETENTE_LOCAL": "1"}
    env.pop("DETENTE_URL", None)
    # An installed package has its bytecode compiled (pip does it); a machine that sets
    # PYTHONDONTWRITEBYTECODE would make every run compile every module from source.
    # The warm-up round writes the bytecode into a private cache instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    pycache = tempfile.TemporaryDirectory(prefix="detente-bench-pycache-")
    env["PYTHONPYCACHEPREFIX"] = pycache.name
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    if "claim-open" in tables:
        claim_open_table(env, args.runs)
    if "status" not in tables:
        return
    print()
    print(
        "| events | command | median s | best s | median CPU s | vs python -c pass "
        "| CPU vs python -c pass | target |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---|")
    for size in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            repo = make_repo(Path(tmp))
            print(f"seeding {size} events ...", file=sys.stderr)
            claim_id = _seed(repo, size)
            status = [*_DETENTE, "claim", "status", claim_id, "--json"]
            commands: dict[str, tuple[list[str], dict[str, str]]] = {
                "python -c pass": ([sys.executable, "-c", "pass"], env),
                "git status": (["git", "status"], env),
                "detente --help": ([*_DETENTE, "--help"], env),
                "detente claim status ID --json": (status, env),
                "detente claim list --json": ([*_DETENTE, "claim", "list", "--json"], env),
            }
            probing = {k: v for k, v in env.items() if k != "DETENTE_LOCAL"}
            if _port_is_free(7420):
                commands["claim status, default (no server: probe, then local)"] = (
                    status,
                    probing,
                )
            server, port = spawn_server(
                [*_DETENTE, "serve", "--repo", str(repo), "--port"],
                "detente serve",
                env=probing,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            served = {**probing, "DETENTE_URL": f"http://127.0.0.1:{port}"}
            commands["claim status, server mode (DETENTE_URL)"] = (status, served)
            walls: dict[str, list[float]] = {name: [] for name in commands}
            cpus: dict[str, list[float]] = {name: [] for name in commands}
            try:
                for run in range(args.runs + 1):
                    for name, (command, command_env) in commands.items():
                        wall, cpu = _timed(command, repo, command_env)
                        if run:  # the first round warms the page cache and the .pyc files
                            walls[name].append(wall)
                            cpus[name].append(cpu)
                    print(f"  run {run}/{args.runs}", file=sys.stderr)
            finally:
                server.terminate()
                server.wait(timeout=30)
            base = statistics.median(walls["python -c pass"])
            base_cpu = statistics.median(cpus["python -c pass"])
            for name in commands:
                median, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
                target = next((f"<= {t:.2f} s" for k, t in _TARGETS.items() if k in name), "")
                print(
                    f"| {size} | `{name}` | {median:.3f} | {min(walls[name]):.3f} | "
                    f"{cpu:.3f} | {median / base:.1f}x | {cpu / base_cpu:.1f}x | {target} |"
                )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
