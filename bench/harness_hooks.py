"""Benchmark: one agent-harness hook call (``detente hook-harness``), against
``python -c pass`` and the git ``pre-commit`` hook, in the same run.

A harness runs the hook before every edit, so the whole process is timed: interpreter
start, imports, opening the repository and the client, the pre-commit operation, the
answer. The repository holds two live claims: the session's (``src/own.py``, session
``claude-bench``) and another agent's (``src/held.py``). Commands, each ``--runs`` times,
taking turns run by run so a load spike on this shared machine hits all of them alike:

- ``python -c pass``: the interpreter alone (baseline);
- ``pre-commit hook``: the git hook ``detente init`` installs, committing ``src/own.py``
  (local mode);
- ``hook: own file`` / ``hook: held file``: Claude Code's ``PreToolUse`` payload for an
  ``Edit`` of each, in local mode (``DETENTE_LOCAL=1``: target p50 <= 0.20 s) and against
  ``detente serve`` on the same store (``DETENTE_URL``: target p50 <= 0.10 s);
- ``hook: Bash ls``: a shell command with nothing to judge (answered without connecting).

Reported per command: the median (p50) and best wall time, the median CPU time of the
child, the mean CPU time the server spent on a call (server mode; read from
``/proc/<pid>/stat`` in clock ticks, so a mean over the runs, Linux only: a shared
machine's load stretches wall times, much less this), and the ratio of the median wall
time to ``python -c pass``'s; the header names the interpreter, the detente package timed
and the load average before and after.

What a user gets is measured: every command runs with the bytecode cached where Python
keeps it (``__pycache__`` beside each module: ``pip install`` compiles an installed
package's, the warm-up round writes a source checkout's), so no run compiles a module.
``PYTHONDONTWRITEBYTECODE`` and ``PYTHONPYCACHEPREFIX`` are removed from the children's
environment: with the first set (this machine sets it) a cache prefix is never written,
so every run recompiled every module it imported, ``python -c pass``'s stdlib included.
To time the package as a user installs it, run the bench with a virtualenv's
interpreter: ``python -m venv /tmp/v && /tmp/v/bin/pip install . pytest`` then
``/tmp/v/bin/python bench/harness_hooks.py``.

Usage: ``python bench/harness_hooks.py [--runs 15]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _servers import make_repo, spawn_server

import detente
from detente.client.connect import open_local
from detente.client.seeds import claim_seed

_DETENTE = [sys.executable, "-c", "from detente.cli.main import main; main()"]
_TARGETS = {"local": 0.20, "server": 0.10}


def _cpu_of(pid: int) -> float | None:
    """Seconds of CPU (user + system) process ``pid`` has used, or None off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed(command: list[str], cwd: Path, env: dict[str, str], stdin: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env=env, input=stdin.encode(), capture_output=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _setup(root: Path) -> tuple[Path, str]:
    repo = make_repo(root)
    (repo / "src").mkdir()
    for name in ("own", "held", "free"):
        (repo / "src" / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "src"],
        cwd=repo,
        check=True,
    )
    ids: list[str] = []
    with open_local(repo) as client:
        for agent, session, path in (
            ("alice", "claude-bench", "src/own.py"),
            ("bob", None, "src/held.py"),
        ):
            view = client.open_claim(
                claim_seed(
                    repo=client.repo_name or "repo",
                    objective=f"{agent} works on {path}",
                    agent=agent,
                    session=session,
                    base_commit="HEAD",
                    paths=[path],
                    ttl=36000,
                )
            )
            ids.append(str(view["claim"]["id"]))
    from detente.vcs.hook_scripts import install_local

    install_local(repo)
    (repo / "src" / "own.py").write_text("def own():\n    return 2\n")
    subprocess.run(["git", "add", "src/own.py"], cwd=repo, check=True)
    return repo, ids[0]


def _edit(repo: Path, rel: str) -> str:
    return json.dumps(
        {
            "session_id": "bench",
            "cwd": str(repo),
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": {
                "file_path": str(repo / rel),
                "old_string": "return 1",
                "new_string": "return 3",
            },
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo, own = _setup(root)
        base = {k: v for k, v in os.environ.items() if not k.startswith("DETENTE_")}
        # The bytecode cache a user has (see the module docstring): beside the modules.
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        base.pop("PYTHONPYCACHEPREFIX", None)
        base["PYTHONPATH"] = str(Path(detente.__file__).resolve().parents[1])  # this checkout
        local = {**base, "DETENTE_LOCAL": "1"}
        server, port = spawn_server(
            [*_DETENTE, "--repo", str(repo), "serve", "--port"],
            "detente serve",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=local,
        )
        remote = {**base, "DETENTE_URL": f"http://127.0.0.1:{port}"}
        hook = [*_DETENTE, "hook-harness", "claude", "pre-tool"]
        bash = json.dumps(
            {
                "session_id": "bench",
                "cwd": str(repo),
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "ls -la"},
            }
        )
        rows: list[tuple[str, str, list[str], dict[str, str], str]] = [
            ("python -c pass", "-", [sys.executable, "-c", "pass"], local, ""),
            (
                "pre-commit hook",
                "local",
                [str(repo / ".git/hooks/pre-commit")],
                {**local, "DETENTE_CLAIM": own},
                "",
            ),
            ("hook: Bash ls", "local", hook, local, bash),
            ("hook: own file", "local", hook, local, _edit(repo, "src/own.py")),
            ("hook: held file", "local", hook, local, _edit(repo, "src/held.py")),
            ("hook: own file", "server", hook, remote, _edit(repo, "src/own.py")),
            ("hook: held file", "server", hook, remote, _edit(repo, "src/held.py")),
        ]
        try:
            for _, _, command, env, stdin in rows:  # warm-up: bytecode cached, like an install
                _timed(command, repo, env, stdin)
            walls: list[list[float]] = [[] for _ in rows]
            cpus: list[list[float]] = [[] for _ in rows]
            served: list[list[float]] = [[] for _ in rows]
            for _ in range(args.runs):
                for i, (_, mode, command, env, stdin) in enumerate(rows):
                    before = _cpu_of(server.pid) if mode == "server" else None
                    wall, cpu = _timed(command, repo, env, stdin)
                    after = _cpu_of(server.pid) if before is not None else None
                    walls[i].append(wall)
                    cpus[i].append(cpu)
                    if before is not None and after is not None:
                        served[i].append(after - before)
        finally:
            server.terminate()
            server.wait(timeout=15)
    baseline = statistics.median(walls[0])
    print(f"python {sys.version.split()[0]} ({sys.executable}), {os.cpu_count()} cores")
    print(f"detente {detente.__version__} from {Path(detente.__file__).parent}")
    print(f"bytecode cached beside the modules; load {load_before:.1f} before, ", end="")
    print(f"{os.getloadavg()[0]:.1f} after the runs")
    print(
        f"runs: {args.runs}; targets: p50 <= {_TARGETS['server']} s (server), "
        f"<= {_TARGETS['local']} s (local)\n"
    )
    print(
        "| command | mode | p50 wall (s) | best (s) | p50 CPU (s) | mean server CPU (s) "
        "| x python -c pass |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for (name, mode, *_), wall, cpu, by_server in zip(rows, walls, cpus, served, strict=True):
        p50 = statistics.median(wall)
        on_server = f"{statistics.fmean(by_server):.3f}" if by_server else "-"
        print(
            f"| {name} | {mode} | {p50:.3f} | {min(wall):.3f} | "
            f"{statistics.median(cpu):.3f} | {on_server} | {p50 / baseline:.1f} |"
        )


if __name__ == "__main__":
    main()
