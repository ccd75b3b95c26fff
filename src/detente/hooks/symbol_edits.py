"""What each pushed commit does to symbols, read by the ``pre-receive`` hook.

A claim scoped to symbols (``src/settlement/retry.py::RetryPolicy.backoff``) may change
those symbols of a file, not the whole file, and another claim may hold a different
function of the same file. So the hook maps each pushed commit's diff against its first
parent onto the symbol ranges of both sides (tree-sitter, :func:`detente.index.diff.touched`:
a hunk's old lines in the parent's symbols, its new lines in the commit's) and sends,
per file of a language the index reads, the innermost symbols the change touches and
whether it changes lines outside every symbol. The server then judges each file as the
``pre-commit`` check does (:mod:`detente.domain.named_authority`).

Reading goes through the hook's own git environment, which sees the push's quarantined
objects. Whatever cannot be read (a root commit, a commit changing more than
:data:`MAX_FILES` files, a git error) keeps whole-file judgement: stricter, never looser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from detente.errors import DetenteError
from detente.hooks.gitread import HookCommit, HookRepo
from detente.index.languages import language_of

__all__ = ["MAX_FILES", "checkout_edits", "with_symbol_edits"]

#: Commits changing more files than this are judged by whole files (a bound on the
#: parsing a hook does before git may proceed).
MAX_FILES = 200


def with_symbol_edits(repo: HookRepo, commits: Sequence[HookCommit]) -> list[HookCommit]:
    """``commits`` with :attr:`HookCommit.edits` filled in where they can be read."""
    wanted = [c for c in commits if len(c.files) <= MAX_FILES and any(map(language_of, c.files))]
    if not wanted:
        return list(commits)
    from detente.index.diff import touched
    from detente.index.symbols import SymbolIndex

    index = SymbolIndex(repo.cwd, git=repo.git)
    found: dict[str, tuple[tuple[str, tuple[str, ...], bool], ...]] = {}
    for commit in wanted:
        parent = repo.resolve(f"{commit.oid}^")
        if parent is None:
            continue  # a root commit: every file is new, judged whole
        try:
            files = touched(index, parent, head=commit.oid)
        except DetenteError:
            continue
        found[commit.oid] = tuple(
            (f.path, f.symbols, f.outside) for f in files if language_of(f.path)
        )
    return [replace(c, edits=found.get(c.oid, ())) for c in commits]


def checkout_edits(
    repo: HookRepo, paths: Sequence[str]
) -> tuple[tuple[str, tuple[str, ...], bool], ...]:
    """What the checkout the ``pre-commit`` hook runs in changes in the symbols of
    ``paths`` against ``HEAD`` (uncommitted changes included: a superset of what is
    staged), for the files of a language the index reads.

    The server reads the committing claim's worktree itself; this is for a commit made
    elsewhere (a claim without a worktree, committed with ``DETENTE_CLAIM``). Empty when
    nothing can be read (no ``HEAD`` yet, more than :data:`MAX_FILES` files, a git
    error): the server then judges whole files.
    """
    wanted = {p for p in paths if language_of(p)}
    if not wanted or len(paths) > MAX_FILES or repo.resolve("HEAD") is None:
        return ()
    from detente.index.diff import touched
    from detente.index.symbols import SymbolIndex

    try:
        files = touched(SymbolIndex(repo.cwd, git=repo.git), "HEAD", worktree=repo.cwd)
    except DetenteError:
        return ()
    return tuple((f.path, f.symbols, f.outside) for f in files if f.path in wanted)
