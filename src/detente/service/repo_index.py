"""The repository indexes the service consults: symbols and commit trees.

One :class:`~detente.index.symbols.SymbolIndex` and one
:class:`~detente.index.trees.GitTrees` per repository directory for the whole process:
their caches are keyed by commit and blob OIDs, which never change meaning, so sharing
them between services and threads is safe.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on first use: a claim read never parses code
    from detente.index.symbols import SymbolIndex
    from detente.index.trees import GitTrees

__all__ = ["resolve_symbols", "symbol_index", "tree_source"]

_INDEXES: dict[Path, SymbolIndex] = {}
_TREES: dict[Path, GitTrees] = {}
_LOCK = threading.Lock()


def tree_source(repo: Path) -> GitTrees:
    """The shared commit-tree reader of the repository at ``repo``."""
    key = repo.resolve()
    with _LOCK:
        trees = _TREES.get(key)
        if trees is None:
            from detente.index.trees import GitTrees

            trees = _TREES[key] = GitTrees(key)
        return trees


def symbol_index(repo: Path) -> SymbolIndex:
    """The shared symbol index of the repository at ``repo``."""
    key = repo.resolve()
    with _LOCK:
        index = _INDEXES.get(key)
        if index is None:
            from detente.index.symbols import SymbolIndex

            index = _INDEXES[key] = SymbolIndex(key)
        return index


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
