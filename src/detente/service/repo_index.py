"""The repository indexes the service consults: symbols and commit trees.

One :class:`~detente.index.symbols.SymbolIndex` and one
:class:`~detente.vcs.trees.GitTrees` per repository directory (and configuration) for
the whole process, kept in one registry under one lock: their caches are keyed by commit
and blob OIDs, which never change meaning, so sharing them between services and threads
is safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from detente.domain.claims.model import Claim
from detente.domain.named_authority import Edit
from detente.domain.overlap.paths import normalize_path
from detente.domain.overlap.symbols import split_symbol
from detente.domain.overlap.trees import Artifact
from detente.domain.state import RepoState
from detente.errors import DetenteError, ValidationError

if TYPE_CHECKING:  # imported on first use: a claim read never parses code
    from detente.index.symbols import SymbolIndex
    from detente.vcs.trees import GitTrees

__all__ = ["resolve_symbols", "symbol_index", "symbols_matter", "tree_source", "worktree_edits"]

#: Every shared reader, by ``(kind, repository, settings...)``: one cache, one lock.
_SHARED: dict[tuple[object, ...], object] = {}
_LOCK = threading.Lock()

_T = TypeVar("_T")


def _shared(key: tuple[object, ...], kind: type[_T], build: Callable[[], _T]) -> _T:
    """The process's one ``kind`` object under ``key``, built on first use."""
    with _LOCK:
        found = _SHARED.get(key)
        if found is None:
            found = _SHARED[key] = build()
    if not isinstance(found, kind):  # keys start with the kind's name: cannot happen
        raise TypeError(f"{key!r} holds a {type(found).__name__}")
    return found


def tree_source(
    repo: Path, generated: tuple[str, ...] = (), artifacts: tuple[Artifact, ...] = ()
) -> GitTrees:
    """The shared commit-tree reader of the repository at ``repo``, with the served
    configuration's generated patterns and artifacts added to every commit's own."""
    from detente.vcs.trees import GitTrees

    top = repo.resolve()
    return _shared(
        ("trees", top, generated, artifacts), GitTrees, lambda: GitTrees(top, generated, artifacts)
    )


def symbol_index(repo: Path) -> SymbolIndex:
    """The shared symbol index of the repository at ``repo``."""
    from detente.index.symbols import SymbolIndex

    top = repo.resolve()
    return _shared(("symbols", top), SymbolIndex, lambda: SymbolIndex(top))


def resolve_symbols(
    repo: Path | None, names: Sequence[str], commit: str, *, field: str
) -> tuple[str, ...]:
    """Claimed symbol names in canonical ``path::Qualified.name`` form.

    Without a repository path (a path-less test repo) names are kept as given (stripped),
    and compare by qualified name alone.

    Raises:
        ValidationError: ``validation_error`` (HTTP 422) when a bare name matches no
            symbol at ``commit`` or several (``candidates`` lists them).
    """
    if repo is None or not names:
        return tuple(n.strip() for n in names)
    return symbol_index(repo).resolve_all(names, commit, field=field)


def symbols_matter(
    state: RepoState, claim: Claim | None, paths: Sequence[str], *, staged: bool = False
) -> bool:
    """Whether a write of ``paths`` by ``claim`` depends on symbols: the claim names
    symbols, or another claim holds a symbol in one of the paths (hold the lock).

    ``staged``: the caller already has the edits (the hook read the index), so neither a
    claim nor its worktree is needed to judge by symbols."""
    if not staged and (claim is None or not claim.worktree):
        return False
    if claim is not None and claim.symbols:
        return True
    wanted = set()
    for path in paths:
        try:
            wanted.add(normalize_path(path, case_insensitive=state.case_insensitive))
        except ValidationError:
            continue  # the check itself reports it
    return any(split_symbol(s)[0] in wanted for s in state.claims.symbols)


def worktree_edits(repo: Path | None, claim: Claim | None) -> dict[str, Edit] | None:
    """What ``claim``'s worktree changes in the symbols of its files, against its work
    base (:mod:`detente.service.claim_work`: its base commit, or the merge-base with the
    default branch after a rebase; uncommitted and untracked files included: a superset
    of what is staged).

    Call it outside the repository's lock, only when :func:`symbols_matter`.

    Returns:
        ``path -> (innermost symbols touched, lines outside every symbol changed)``; None
        when there is no worktree of the repository to read (every write is then a
        whole-file write).
    """
    if repo is None or claim is None or not claim.worktree:
        return None
    if not Path(claim.worktree).is_dir():
        return None
    from detente.service.claim_work import claim_work

    try:
        files = claim_work(repo, symbol_index(repo), claim).files
    except DetenteError:
        return None
    return {f.path: (f.symbols, f.outside) for f in files}
