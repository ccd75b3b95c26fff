"""Benchmark: a claim's branch move merge-checked against the live claims sharing a
directory with it, against checking every pair and against one bare ``git merge-tree``.

The tree is ansible's (``../shared/data/ansible-paths.txt``, 5,053 files, written into a
scratch git repository with a line of text each). The live claims are ``--claims`` real
ansible commits (``ansible-commits.jsonl``: objective = subject, paths = the commit's
files, kept when every file is in the tree and there are at most ``--max-files``): each
claim holds its commit's files and has a branch off ``main`` that changes each of them
(every second claim edits the first line of its files, the others append a line, so some
pairs that share a file predict a conflict and others merge cleanly). Claims that
overlap negotiate, as in a real repository; every one of them holds.

A *branch move* is one more commit on a claim's branch followed by its merge check
(:meth:`detente.service.merge_checks.MergeChecksService.check`: git reads, the partners
that share a directory, ``git merge-tree`` of each, and the command that records it in
the SQLite store). Baselines in the same run, on the same moves: ``all pairs`` merges the
moved head with ``main`` and with every other claim's branch (what a check without the
directory bound would run, without the store write), and ``one merge-tree`` is a single
``git merge-tree --write-tree`` of the moved head with ``main`` (the floor of any check).
Wall-clock milliseconds per move; the bar is a median of at most 200 ms for detente's
check with 50 live claims.

Usage: ``python bench/merge_checks.py [--claims 50] [--moves 30] [--max-files 6]``
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from detente.clock import SystemClock
from detente.domain.claims.commands import OpenClaim
from detente.domain.claims.model import Agent
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from detente.vcs.git import Git
from detente.vcs.merge_tree import predict_merge
from detente.vcs.repo import resolve_commit

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
_ID = ["-c", "user.name=b", "-c", "user.email=b@b"]


def _git(
    repo: Path, *args: str, input: bytes | None = None, env: dict[str, str] | None = None
) -> str:
    import os

    done = subprocess.run(
        ["git", *_ID, *args],
        cwd=repo,
        input=input,
        capture_output=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return done.stdout.decode().strip()


def _tree(root: Path, paths: Sequence[str]) -> tuple[Path, str]:
    """A repository whose ``main`` holds every path with one line of text; (repo, OID)."""
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for path in paths:
        file = repo / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(f"{path}\nline two\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "ansible's tree")
    return repo, _git(repo, "rev-parse", "HEAD")


def _commit_on(repo: Path, branch: str, parent: str, edits: dict[str, str], message: str) -> str:
    """A commit on ``branch`` over ``parent`` changing ``edits`` (path -> text), made with
    plumbing in a scratch index (nothing checked out)."""
    index = repo / ".git" / f"bench-index-{branch.replace('/', '-')}"
    env = {"GIT_INDEX_FILE": str(index)}
    _git(repo, "read-tree", parent, env=env)
    for path, text in edits.items():
        blob = _git(repo, "hash-object", "-w", "--stdin", input=text.encode())
        _git(repo, "update-index", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = _git(repo, "write-tree", env=env)
    oid = _git(repo, "commit-tree", tree, "-p", parent, "-m", message)
    _git(repo, "update-ref", f"refs/heads/{branch}", oid)
    index.unlink(missing_ok=True)
    return oid


def _text(repo: Path, rev: str, path: str) -> str:
    return _git(repo, "show", f"{rev}:{path}") + "\n"


def _commits(tree: set[str], count: int, max_files: int, seed: int) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in (DATA / "ansible-commits.jsonl").read_text().splitlines()]
    usable = [r for r in rows if 0 < len(r["files"]) <= max_files and set(r["files"]) <= tree]
    return random.Random(seed).sample(usable, count)


def _timed(moves: Sequence[str], run: Callable[[str], object]) -> list[float]:
    out: list[float] = []
    for claim_id in moves:
        start = time.perf_counter()
        run(claim_id)
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--claims", type=int, default=50)
    parser.add_argument("--moves", type=int, default=30)
    parser.add_argument("--max-files", type=int, default=6)
    parser.add_argument("--seed", type=int, default=33)
    args = parser.parse_args()
    paths = (DATA / "ansible-paths.txt").read_text(encoding="utf-8").splitlines()
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        repo, base = _tree(Path(scratch), paths)
        service = Service(
            SqliteStore(Path(scratch) / "d.db"),
            SystemClock(),
            [RepoConfig("demo", path=repo, main_worktree=repo)],
            resolve_commit=resolve_commit,
        )
        claims: dict[str, tuple[str, list[str]]] = {}
        for n, row in enumerate(_commits(set(paths), args.claims, args.max_files, args.seed)):
            files = [str(f) for f in row["files"]]  # type: ignore[attr-defined]
            branch = f"claim/bench-{n}"
            edits = {
                f: (
                    f"claim {n} rewrote {f}\nline two\n" if n % 2 else f"{f}\nline two\nclaim {n}\n"
                )
                for f in files
            }
            head = _commit_on(repo, branch, base, edits, str(row["subject"]))
            seed = OpenClaim(
                repo="demo",
                objective=str(row["subject"])[:200],
                base_commit=base,
                agent=Agent(id=f"agent{n}", name=f"agent{n}"),
                lease_ttl_seconds=3600,
                paths=tuple(files),
            )
            claim = service.claims.open_claim(replace(seed, branch=branch)).claim
            claims[claim.id] = (branch, files)
            del head
        setup = time.perf_counter() - started
        ids = sorted(claims)
        for claim_id in ids:  # every branch checked once: the steady state a move meets
            service.merge_checks.check(claim_id)
        moves = random.Random(args.seed).sample(ids, min(args.moves, len(ids)))
        git = Git(repo)
        heads: dict[str, str] = {}

        def move(claim_id: str) -> None:
            branch, files = claims[claim_id]
            tip = _git(repo, "rev-parse", branch)
            text = _text(repo, tip, files[0]) + "one more line\n"
            heads[claim_id] = _commit_on(repo, branch, tip, {files[0]: text}, "move")

        partners: list[int] = []
        conflicts: list[int] = []

        def check(claim_id: str) -> None:
            result = service.merge_checks.check(claim_id)
            assert result.checks.merge is not None
            partners.append(len(result.checks.merge.checked) - 1)
            conflicts.append(len(result.checks.merge.conflicts))

        def all_pairs(claim_id: str) -> None:
            head = heads[claim_id]
            predict_merge(git, head, "refs/heads/main")
            for other in ids:
                if other != claim_id:
                    predict_merge(git, head, f"refs/heads/{claims[other][0]}")

        def bare(claim_id: str) -> None:
            predict_merge(git, heads[claim_id], "refs/heads/main")

        for claim_id in moves:
            move(claim_id)
        detente_ms = _timed(moves, check)
        all_ms = _timed(moves, all_pairs)
        bare_ms = _timed(moves, bare)
        service.store.close()
    floor = statistics.median(bare_ms)
    print(
        f"{len(ids)} live claims on ansible's tree ({len(paths)} files), {len(moves)} branch "
        f"moves; set-up {setup:.1f} s; partners per move: median "
        f"{statistics.median(partners):.0f}, max {max(partners)}; moves predicting a "
        f"conflict: {sum(1 for c in conflicts if c)}"
    )
    print(f"{'check':<34} {'merges':>7} {'p50 ms':>8} {'p90 ms':>8} {'ratio':>6}")
    rows = (
        ("detente (pairs sharing a directory)", statistics.median(partners) + 1, detente_ms),
        ("all pairs (no bound, no store)", len(ids), all_ms),
        ("one bare git merge-tree", 1, bare_ms),
    )
    for name, merges, times in rows:
        p50 = statistics.median(times)
        p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else p50
        print(f"{name:<34} {merges:>7.0f} {p50:>8.1f} {p90:>8.1f} {p50 / floor:>6.1f}")


if __name__ == "__main__":
    main()
