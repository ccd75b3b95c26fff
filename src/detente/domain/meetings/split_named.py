"""Symbol and module targets in a split: which a claim may be assigned, which it keeps.

A meeting contests symbols (``path::Qualified.name``) and modules (dotted names) as well
as path patterns (:mod:`detente.domain.overlap.named`). A split may assign them like any
target:

- a symbol may go to a claim that holds it, holds a symbol containing it, a file pattern
  matching its file, or a module containing it; a module to a claim that holds it or a
  module containing it (``module:NAME`` names a module explicitly);
- a claim keeps its own symbols and modules except those that meet a target assigned to
  another claim, and the file of a symbol (or the directories of a module) assigned to
  another claim is carved out of its path patterns, so no two claims keep authority over
  one symbol. Carving the whole file is deliberate: detente cannot carve part of a file
  out of a glob, and losing the rest of the file is the safe side.

Pure: no IO.
"""

from __future__ import annotations

from collections.abc import Sequence

from detente.domain.claims.model import Claim
from detente.domain.overlap import modules, symbols
from detente.domain.overlap.carveouts import carved_matches, carved_may_overlap
from detente.domain.overlap.globs import may_overlap
from detente.domain.overlap.paths import has_wildcard

MODULE_PREFIX = "module:"


def named_kind(claim: Claim, target: str) -> str | None:
    """``"symbol"``, ``"module"`` or None (a path target) for one split target."""
    if "::" in target:
        return "symbol"
    if target.startswith(MODULE_PREFIX) or target in claim.modules:
        return "module"
    return None


def bare(target: str) -> str:
    """The module name without its ``module:`` prefix (other targets unchanged)."""
    return target.removeprefix(MODULE_PREFIX)


def asked_for(claim: Claim, kind: str, target: str) -> bool:
    """Is the symbol or module ``target`` inside what ``claim`` asked for?"""
    if kind == "module":
        return any(modules.contains(mine, target) for mine in claim.modules)
    if any(symbols.contains(mine, target) for mine in claim.symbols):
        return True
    if any(modules.symbol_in(mine, target) for mine in claim.modules):
        return True
    return any(symbols.path_meets(p, target) for p in claim.paths + claim.pending_paths)


def _meets(kind: str, held: str, target: str) -> bool:
    """Does a held symbol or module meet another claim's assigned ``target``?"""
    target_kind = None
    if "::" in target:
        target_kind = "symbol"
    elif target.startswith(MODULE_PREFIX):
        target_kind = "module"
    other = bare(target)
    if kind == "symbol":
        if target_kind == "symbol":
            return symbols.meet(held, other) is not None
        if target_kind == "module":
            return modules.symbol_in(other, held)
        return symbols.path_meets(other.partition("#")[0], held)
    if target_kind == "symbol":
        return modules.symbol_in(held, other)
    if target_kind == "module":
        return modules.meet(held, other) is not None
    return modules.path_witness(held, other.partition("#")[0]) is not None


def carved_for(target: str) -> list[str]:
    """The path patterns another claim's glob loses when ``target`` is assigned away:
    the target itself (without ``#section``), a symbol's file, a module's directories."""
    if "::" in target:
        path, _ = symbols.split_symbol(target)
        return [path] if path is not None else []
    if target.startswith(MODULE_PREFIX):
        return list(modules.module_patterns(bare(target)))
    return [target.partition("#")[0]]


def kept_named(claim: Claim, theirs: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(modules, symbols)`` the claim keeps when ``theirs`` went to other claims."""
    kept_modules = [m for m in claim.modules if not any(_meets("module", m, t) for t in theirs)]
    kept_symbols = [s for s in claim.symbols if not any(_meets("symbol", s, t) for t in theirs)]
    return kept_modules, kept_symbols


def named_cuts(pattern: str, carve_outs: Sequence[str], theirs: Sequence[str]) -> list[str]:
    """Path carve-outs ``pattern`` needs so it keeps no symbol or module in ``theirs``."""
    cuts: list[str] = []
    for target in theirs:
        if "::" in target:
            path, _ = symbols.split_symbol(target)
            if path is not None and symbols.path_meets(pattern, target):
                cuts.append(path)
        elif target.startswith(MODULE_PREFIX):
            cuts += [
                q
                for q in modules.module_patterns(bare(target))
                if carved_may_overlap(pattern, carve_outs, q)
            ]
    return cuts


def named_clash(
    a: tuple[Sequence[str], Sequence[str], Sequence[str], dict[str, list[str]]],
    b: tuple[Sequence[str], Sequence[str], Sequence[str], dict[str, list[str]]],
) -> str | None:
    """A symbol or module both scopes still reach, or None.

    Each scope is ``(paths, modules, symbols, carve-outs by pattern)``.
    """
    for first, second in ((a, b), (b, a)):
        paths, mods, syms, cuts = second
        for sym in first[2]:
            if any(symbols.meet(sym, s) is not None for s in syms):
                return sym
            if any(modules.symbol_in(m, sym) for m in mods):
                return sym
            file, _ = symbols.split_symbol(sym)
            for p in paths:
                if file is not None and not has_wildcard(file):
                    if carved_matches(p, cuts.get(p, ()), file):
                        return sym
                elif symbols.path_meets(p, sym):
                    return sym
        for mod in first[1]:
            for m in mods:
                witness = modules.meet(mod, m)
                if witness is not None:
                    return witness
            for p in paths:
                for q in modules.module_patterns(mod):
                    if carved_may_overlap(p, cuts.get(p, ()), q) and may_overlap(p, q):
                        return f"{mod} ({q})"
    return None
