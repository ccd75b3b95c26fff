"""Overlaps that involve a symbol or a module target, against other claims' targets.

The rules (:mod:`~detente.domain.overlap.symbols`, :mod:`~detente.domain.overlap.modules`):
a file pattern contains the symbols of the files it matches; a definition contains its
nested definitions; a module contains its submodules, its files and their symbols.
Everything else about a pair of symbols (two functions of one file) does not meet.

Each finding is ``(claim_id, kind, mine, theirs, witness)``: ``kind`` is ``"symbol"``
when a symbol is involved (the witness names the symbol both cover) and ``"module"``
otherwise (the witness is the submodule or a path both cover). Pure: no IO.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence, Set

from detente.domain.overlap import modules, symbols
from detente.domain.overlap.carveouts import carved_matches, carved_may_overlap
from detente.domain.overlap.globs import matches
from detente.domain.overlap.index import PatternIndex
from detente.domain.overlap.paths import has_wildcard

__all__ = ["Finding", "named_overlaps"]

Finding = tuple[str, str, str, str, str | None]
"""``(claim_id, kind, mine, theirs, witness)``; ``kind`` is ``"symbol"`` or ``"module"``;
``witness`` is None when a pattern search was undecided within its budget."""


def named_overlaps(
    *,
    paths: tuple[str, ...],
    module_targets: tuple[str, ...],
    symbol_targets: tuple[str, ...],
    path_index: PatternIndex,
    modules_held: Mapping[str, Set[str]],
    symbols_held: Mapping[str, Set[str]],
    exclude: str | None,
    carve_outs: Mapping[str, Sequence[str]] | None = None,
) -> Iterator[Finding]:
    """Every symbol or module overlap of one claim's targets with the holders' targets.

    Args:
        paths: my canonical path patterns.
        module_targets: my modules.
        symbol_targets: my symbols (``path::Qualified.name``, or bare).
        path_index: the holders' path patterns.
        modules_held: module -> ids of the claims holding it.
        symbols_held: symbol -> ids of the claims holding it.
        exclude: a claim id to leave out (the claim being analysed).
        carve_outs: ``{my pattern: carve-outs}``: a symbol whose file a split carved out
            of my pattern is not mine, nor a module whose directories were.

    Yields:
        Findings in a deterministic order (sorted holders and values).
    """

    def holders(mapping: Mapping[str, Set[str]], value: str) -> list[str]:
        return sorted(c for c in mapping[value] if c != exclude)

    for mine in symbol_targets:
        for theirs in sorted(symbols_held):
            witness = symbols.meet(mine, theirs)
            if witness is not None:
                for claim_id in holders(symbols_held, theirs):
                    yield claim_id, "symbol", mine, theirs, witness
        for claim_id, theirs in _patterns_matching_symbol(path_index, mine, exclude):
            yield claim_id, "symbol", mine, theirs, mine
        for theirs in sorted(modules_held):
            if modules.symbol_in(theirs, mine):
                for claim_id in holders(modules_held, theirs):
                    yield claim_id, "symbol", mine, theirs, mine
    cuts = carve_outs or {}
    for mine in paths:
        mine_cut = cuts.get(mine, ())
        for theirs in sorted(symbols_held):
            if symbols.path_meets(mine, theirs) and not _carved_symbol(mine, mine_cut, theirs):
                for claim_id in holders(symbols_held, theirs):
                    yield claim_id, "symbol", mine, theirs, theirs
        for theirs in sorted(modules_held):
            witness = modules.path_witness(theirs, mine)
            if (
                witness is not None
                and mine_cut
                and not any(
                    carved_may_overlap(mine, mine_cut, q) for q in modules.module_patterns(theirs)
                )
            ):
                witness = None
            if witness is not None:
                for claim_id in holders(modules_held, theirs):
                    yield claim_id, "module", mine, theirs, witness
    for mine in module_targets:
        for theirs in sorted(modules_held):
            witness = modules.meet(mine, theirs)
            if witness is not None:
                for claim_id in holders(modules_held, theirs):
                    yield claim_id, "module", mine, theirs, witness
        for theirs in sorted(symbols_held):
            if modules.symbol_in(mine, theirs):
                for claim_id in holders(symbols_held, theirs):
                    yield claim_id, "symbol", mine, theirs, theirs
        for pattern in modules.module_patterns(mine):
            for claim_id, theirs, witness in path_index.overlapping(pattern, exclude=exclude):
                yield claim_id, "module", mine, theirs, witness


def _carved_symbol(pattern: str, cuts: Sequence[str], symbol: str) -> bool:
    """Did a split carve the symbol's (concrete) file out of ``pattern``?"""
    if not cuts:
        return False
    path, _ = symbols.split_symbol(symbol)
    return path is not None and not has_wildcard(path) and not carved_matches(pattern, cuts, path)


def _patterns_matching_symbol(
    index: PatternIndex, symbol: str, exclude: str | None
) -> list[tuple[str, str]]:
    """``(claim_id, pattern)`` of every indexed pattern matching the symbol's file."""
    path, _ = symbols.split_symbol(symbol)
    if path is None:
        return []
    if not has_wildcard(path):
        # A concrete file: the index answers "who holds it" directly.
        return index.matching(path, exclude=exclude)
    return [(c, p) for c, p in index if c != exclude and matches(p, path)]
