"""Benchmark: what the server-side hooks cost a ref update in the shared repository.

``reference-transaction`` runs for every ref transaction of the shared repository, so its
cost is paid by every ``git update-ref``, ``git branch``, ``git tag`` and fetch there. This
measures, in one run, ``git update-ref`` in a bare repository

- without hooks (the baseline),
- with detente's hooks, on an unprotected ref (the hook reads the configuration and lets
  it through without asking anything),
- with detente's hooks, on the protected ref, carrying detente's integration pass (what
  ``detente claim complete`` pays: the pass is verified, the server is not asked).

Each row is the median wall time of one ``git update-ref`` over ``--updates`` runs.

A second table measures what the local ``pre-commit`` guard costs a ``git commit`` in a
repository with two claims (the committing claim's own file, so the commit goes through):
in local mode (the SQLite store under the common git directory) and in server mode (a
``detente serve`` subprocess on the same repository, ``DETENTE_URL`` set), each against
``git commit --no-verify`` of the same kind of change, interleaved in the same run.
Median and p99 over ``--commits`` commits, ratio of the medians, and the median CPU time
(user + system of git and the hook's process) of each kind of commit.

Usage: ``python bench/hooks.py [--updates 40] [--commits 40]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from detente.vcs.hook_scripts import install_local, install_server
from detente.vcs.hookpass import pass_env


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        input="",
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return done.stdout.strip()


_IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@detente.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@detente.invalid",
}


def _repository(root: Path, name: str, updates: int) -> tuple[Path, list[str]]:
    """A bare repository with a chain of empty commits, main at the first; (path, chain)."""
    bare = root / f"{name}.git"
    _git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    empty = _git(bare, "mktree")
    commits: list[str] = []
    for i in range(updates + 1):
        parent = ["-p", commits[-1]] if commits else []
        commits.append(_git(bare, "commit-tree", empty, *parent, "-m", f"c{i}", env=_IDENTITY))
    _git(bare, "update-ref", "refs/heads/main", commits[0])
    return bare, commits


def _median_ms(run: list[float]) -> float:
    return statistics.median(run) * 1000


def _time(bare: Path, updates: int, commits: list[str], *, protected: bool) -> float:
    samples: list[float] = []
    current = _git(bare, "rev-parse", "refs/heads/main")
    for i in range(updates):
        if protected:
            new = commits[commits.index(current) + 1]
            env = pass_env(bare, "refs/heads/main", current, new)
            argv = ["git", "update-ref", "refs/heads/main", new, current]
        else:
            env, argv = {}, ["git", "update-ref", f"refs/heads/topic-{i}", commits[i]]
        start = time.perf_counter()
        subprocess.run(argv, cwd=bare, check=True, env={**os.environ, **env})
        samples.append(time.perf_counter() - start)
        if protected:
            current = new
    return _median_ms(samples)


def _detente(repo: Path, *args: str, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "detente", "--repo", str(repo), *args, "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


def _claimed(root: Path) -> tuple[Path, str]:
    """A repository where alice claims ``src/a.py`` and bob ``src/b.py`` (local store),
    with the guard installed; (checkout, bob's claim id)."""
    repo = root / "claimed"
    (repo / "src").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main", str(repo))
    for rel in ("src/a.py", "src/b.py"):
        (repo / rel).write_text(f"# {rel}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial", env=_IDENTITY)
    local = {"DETENTE_LOCAL": "1"}
    bob = ""
    for agent, rel in (("alice", "src/a.py"), ("bob", "src/b.py")):
        opened = _detente(
            repo,
            "claim",
            "open",
            "-o",
            agent,
            "-p",
            rel,
            "--agent",
            agent,
            "--no-worktree",
            "--ttl",
            "3600",
            env=local,
        )
        claim = opened["claim"]
        assert isinstance(claim, dict)
        bob = str(claim["id"])
    install_local(repo)
    # This table measures the guard: ``--no-verify`` skips it but not ``post-commit``, which
    # would run in both arms (its merge check has nothing to do here: no claim branches).
    (repo / ".git" / "hooks" / "post-commit").unlink(missing_ok=True)
    return repo, bob


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _commit_samples(
    repo: Path, commits: int, env: dict[str, str]
) -> tuple[list[float], list[float], list[float], list[float]]:
    """``commits`` guarded commits and as many ``--no-verify`` ones, interleaved; each
    changes bob's file. (guarded seconds, baseline seconds, guarded CPU seconds, baseline
    CPU seconds: user + system of git and the hook, robust to other load)."""
    guarded: list[float] = []
    plain: list[float] = []
    guarded_cpu: list[float] = []
    plain_cpu: list[float] = []
    full = {**os.environ, **_IDENTITY, **env}
    for i in range(commits):
        for samples, cpu, extra in (
            (guarded, guarded_cpu, []),
            (plain, plain_cpu, ["--no-verify"]),
        ):
            (repo / "src/b.py").write_text(f"# change {i} {len(samples)} {extra}\n")
            subprocess.run(["git", "add", "src/b.py"], cwd=repo, check=True, env=full)
            argv = ["git", "commit", "-q", *extra, "-m", f"c{i}"]
            cpu_start = _children_cpu()
            start = time.perf_counter()
            done = subprocess.run(argv, cwd=repo, env=full, capture_output=True, text=True)
            samples.append(time.perf_counter() - start)
            cpu.append(_children_cpu() - cpu_start)
            if done.returncode != 0:
                raise SystemExit(f"git commit failed: {done.stderr}")
    return guarded, plain, guarded_cpu, plain_cpu


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def _serving(repo: Path) -> Iterator[str]:
    """``detente serve`` on ``repo`` (its default store) on a free port; its URL."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "detente", "serve", "--repo", str(repo), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "DETENTE_LOCAL"},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=1) as answer:
                    if json.load(answer).get("ok") is True:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("detente serve did not start within 60 s")
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def _p99_ms(run: list[float]) -> float:
    ordered = sorted(run)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000


def _commit_table(root: Path, commits: int) -> list[str]:
    repo, bob = _claimed(root)
    rows: list[tuple[str, list[float], list[float], list[float], list[float]]] = []
    env = {"DETENTE_CLAIM": bob}
    rows.append(("local mode (SQLite store)", *_commit_samples(repo, commits, env)))
    with _serving(repo) as url:
        server_env = {**env, "DETENTE_URL": url}
        rows.append(("server mode (detente serve)", *_commit_samples(repo, commits, server_env)))
    lines = [
        f"git commit of one file with the pre-commit guard, {commits} commits per row "
        "(each against git commit --no-verify of the same change, interleaved)",
        "",
        "| mode | --no-verify median (ms) | guarded median (ms) | guarded p99 (ms) | ratio "
        "| --no-verify CPU (ms) | guarded CPU (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, guarded, plain, guarded_cpu, plain_cpu in rows:
        base, hooked = _median_ms(plain), _median_ms(guarded)
        lines.append(
            f"| {label} | {base:.1f} | {hooked:.1f} | {_p99_ms(guarded):.1f} | "
            f"{hooked / base:.1f}x | {_median_ms(plain_cpu):.1f} | {_median_ms(guarded_cpu):.1f} |"
        )
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=40)
    parser.add_argument("--commits", type=int, default=40)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plain, plain_commits = _repository(root, "plain", args.updates)
        hooked, hooked_commits = _repository(root, "hooked", args.updates)
        install_server(hooked, url="http://127.0.0.1:9", repo_name="hooked")
        base_topic = _time(plain, args.updates, plain_commits, protected=False)
        base_main = _time(plain, args.updates, plain_commits, protected=True)
        topic = _time(hooked, args.updates, hooked_commits, protected=False)
        main_ = _time(hooked, args.updates, hooked_commits, protected=True)
        commit_lines = _commit_table(root, args.commits)
    print(f"git update-ref in a bare repository, median of {args.updates} updates")
    print()
    print("| update | no hooks (ms) | detente hooks (ms) | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| unprotected ref | {base_topic:.1f} | {topic:.1f} | {topic / base_topic:.1f}x |")
    print(
        f"| protected ref, integration pass | {base_main:.1f} | {main_:.1f} | "
        f"{main_ / base_main:.1f}x |"
    )
    print()
    print("\n".join(commit_lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
