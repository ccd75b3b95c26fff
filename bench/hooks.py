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

Usage: ``python bench/hooks.py [--updates 40]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from detente.vcs.hook_scripts import install_server
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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=40)
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
    print(f"git update-ref in a bare repository, median of {args.updates} updates")
    print()
    print("| update | no hooks (ms) | detente hooks (ms) | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| unprotected ref | {base_topic:.1f} | {topic:.1f} | {topic / base_topic:.1f}x |")
    print(
        f"| protected ref, integration pass | {base_main:.1f} | {main_:.1f} | "
        f"{main_ / base_main:.1f}x |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
