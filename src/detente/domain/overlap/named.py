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

from collections.abc import Callable, Iterator, Mapping, Sequence, Set

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

    def held(
        mapping: Mapping[str, Set[str]], kind: str, mine: str, meet: Meet
    ) -> Iterator[Finding]:
        """A finding per holder of each held value that ``meet(mine, value)`` covers."""
        for theirs in sorted(mapping):
            witness = meet(mine, theirs)
            if witness is not None:
                for claim_id in sorted(c for c in mapping[theirs] if c != exclude):
                    yield claim_id, kind, mine, theirs, witness

    for mine in symbol_targets:
        yield from held(symbols_held, "symbol", mine, symbols.meet)
        for claim_id, theirs in _patterns_matching_symbol(path_index, mine, exclude):
            yield claim_id, "symbol", mine, theirs, mine
        yield from held(modules_held, "symbol", mine, _symbol_in_their_module)
    cuts = carve_outs or {}
    for mine in paths:
        mine_cut = tuple(cuts.get(mine, ()))
        yield from held(symbols_held, "symbol", mine, _their_symbol_in_path(mine_cut))
        yield from held(modules_held, "module", mine, _path_in_their_module(mine_cut))
    for mine in module_targets:
        yield from held(modules_held, "module", mine, modules.meet)
        yield from held(symbols_held, "symbol", mine, _their_symbol_in_module)
        for pattern in modules.module_patterns(mine):
            for claim_id, theirs, witness in path_index.overlapping(pattern, exclude=exclude):
                yield claim_id, "module", mine, theirs, witness


#: ``(mine, theirs) -> witness``: what both cover, None when they do not meet.
Meet = Callable[[str, str], str | None]


def _symbol_in_their_module(mine: str, theirs: str) -> str | None:
    return mine if modules.symbol_in(theirs, mine) else None


def _their_symbol_in_path(cuts: Sequence[str]) -> Meet:
    """Their symbol in my pattern, unless a split carved the symbol's file out of it."""

    def meet(mine: str, theirs: str) -> str | None:
        if not symbols.path_meets(mine, theirs):
            return None
        path, _ = symbols.split_symbol(theirs)
        carved = (
            bool(cuts)
            and path is not None
            and not has_wildcard(path)
            and not carved_matches(mine, cuts, path)
        )
        return None if carved else theirs

    return meet


def _path_in_their_module(cuts: Sequence[str]) -> Meet:
    """My pattern in their module, unless a split carved the module's files out of it."""

    def meet(mine: str, theirs: str) -> str | None:
        witness = modules.path_witness(theirs, mine)
        if witness is not None and cuts:
            patterns = modules.module_patterns(theirs)
            if not any(carved_may_overlap(mine, cuts, q) for q in patterns):
                return None
        return witness

    return meet


def _their_symbol_in_module(mine: str, theirs: str) -> str | None:
    return theirs if modules.symbol_in(mine, theirs) else None


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
