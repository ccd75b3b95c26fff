"""Which claims a branch's history says landed: the ``Detente-Claim`` trailers on it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from detente.vcs.git import Git
from detente.vcs.refs import TRAILER

__all__ = ["claims_on", "landings_since", "protected_refs"]


def protected_refs(repo: Path, branch: str) -> list[str]:
    """``refs/heads/<branch>`` and, when it tracks one, its upstream (the shared
    repository's protected branch as this clone last fetched it)."""
    refs = [f"refs/heads/{branch}"]
    upstream = Git(repo).run(
        "rev-parse", "--symbolic-full-name", f"{branch}@{{upstream}}", check=False
    )
    if upstream.returncode == 0 and upstream.stdout.strip().startswith("refs/"):
        refs.append(upstream.stdout.strip())
    return refs


def claims_on(repo: Path, ref: str) -> dict[str, str]:
    """Every claim id a commit reachable from ``ref`` names in a ``Detente-Claim:``
    trailer, with the newest such commit (empty when ``ref`` does not exist).

    One ``git log`` over the whole history (no diffs).

    Raises:
        GitError: ``vcs_error`` when git fails on an existing ref.
    """
    return {claim: commit for claim, (commit, _) in _named(repo, ref, ()).items()}


def landings_since(repo: Path, ref: str, bases: Iterable[str]) -> dict[str, tuple[str, str]]:
    """The claims named (``Detente-Claim:``) by commits on ``ref`` that no commit of
    ``bases`` reaches: ``claim id -> (newest such commit, its first parent)``.

    One ``git log ref --not bases`` (bases git does not have are skipped); empty when
    ``ref`` does not exist. A root commit's parent is the empty string.

    Raises:
        GitError: ``vcs_error`` when git fails on an existing ref.
    """
    return _named(repo, ref, tuple(bases))


def _named(repo: Path, ref: str, bases: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    git = Git(repo)
    found = git.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    if found.returncode != 0:
        return {}
    trailers = f"%(trailers:key={TRAILER},valueonly,separator=%x02)"
    args = ["log", "--ignore-missing", f"--format=%H %P%x01{trailers}%x00", found.stdout.strip()]
    if bases:
        args += ["--not", *bases]
    out = git.run(*args, "--").stdout
    claims: dict[str, tuple[str, str]] = {}
    for record in out.split("\0"):
        commits, _, values = record.strip("\n").partition("\x01")
        commit, _, parents = commits.partition(" ")
        for claim_id in values.strip().split("\x02"):
            if claim_id.strip() and commit:
                claims.setdefault(claim_id.strip(), (commit, parents.partition(" ")[0]))
    return claims
