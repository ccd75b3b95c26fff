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

__all__ = ["MAX_FILES", "staged_edits", "with_symbol_edits"]

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


def staged_edits(repo: HookRepo, paths: Sequence[str]) -> list[dict[str, object]] | None:
    """What the commit in progress does to symbols, read by the ``pre-commit`` guard: the
    staged diff (the index git is committing against ``HEAD``, new side from the index's
    blobs, never the working files) mapped onto symbols, per staged file of a language
    the index reads, as ``[{path, symbols[], outside}]``.

    None when it cannot be read (an unborn branch, more than :data:`MAX_FILES` files, a
    git error, no file of a known language): the server then judges whole files.
    """
    if len(paths) > MAX_FILES or not any(map(language_of, paths)):
        return None
    from detente.index.diff import touched_staged
    from detente.index.symbols import SymbolIndex

    try:
        files = touched_staged(SymbolIndex(repo.cwd, git=repo.git))
    except DetenteError:
        return None
    return [
        {"path": f.path, "symbols": list(f.symbols), "outside": f.outside}
        for f in files
        if language_of(f.path)
    ]
