"""A directory claim and a claim of the directory's own entry are one target.

A claim of the whole directory ``vendor/lib/`` (canonical ``vendor/lib/**``) holds the
path ``vendor/lib`` itself when that path is a submodule's gitlink (a path of the tree,
not a directory of files): the write rule says so
(:meth:`~detente.domain.overlap.globs.CompiledPattern.covers`). The glob intersection
never meets ``vendor/lib/**`` and ``vendor/lib`` (the first matches only below the
second), so overlap analysis asks this module for such pairs, found through the holders'
index (:meth:`~detente.domain.overlap.index.PatternIndex.matching`, which applies the
same rule).
"""

from __future__ import annotations

from detente.domain.overlap.globs import compile_pattern, matches
from detente.domain.overlap.index import PatternIndex
from detente.domain.overlap.paths import has_wildcard

__all__ = ["directory_entries"]


def directory_entries(
    index: PatternIndex, mine: str, exclude: str | None
) -> list[tuple[str, str, str]]:
    """``(claim, their pattern, entry)`` where one side claims a directory ``D/**`` and
    the other the path ``D`` itself (a submodule's gitlink): the glob intersection never
    meets them (``D/**`` matches only below ``D``), the write rule does
    (:meth:`~detente.domain.overlap.globs.CompiledPattern.covers`)."""
    if not has_wildcard(mine):
        return [
            (claim_id, theirs, mine)
            for claim_id, theirs in index.matching(mine, exclude=exclude)
            if not compile_pattern(theirs).matches(mine)
        ]
    entry = mine.removesuffix("/**")
    if entry == mine or has_wildcard(entry):
        return []
    return [
        (claim_id, theirs, entry)
        for claim_id, theirs in index.matching(entry, exclude=exclude)
        if compile_pattern(theirs).matches(entry) and not matches(mine, entry)
    ]
