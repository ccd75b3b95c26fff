"""Module targets: dotted (Python) or ``/`` (Go packages, JS/TS directories) names.

A module is written as a Python dotted name (``detente.storage``) or as a package
directory (``internal/storage``, ``src/components``); both spell the same thing, a run of
name parts. Containment follows the package tree: ``detente.storage`` contains
``detente.storage.sqlite`` (whole parts: ``detente.store`` does not contain
``detente.storage``).

A module resolves to its package directory and files, wherever the source root is: the
patterns of :func:`module_patterns` (``detente/storage/**`` and ``detente/storage.*``, at
the repository root or below one top-level source directory such as ``src/`` or ``lib/``).
Paths that do not exist at a claim's base commit are judged by tree-aware severity
(:mod:`detente.domain.overlap.trees`), so the generous resolution does not over-block.
"""

from __future__ import annotations

import re
from functools import cache

from detente.domain.overlap.globs import Undecided, intersect, matches
from detente.domain.overlap.symbols import split_symbol

__all__ = ["contains", "meet", "module_parts", "module_patterns", "path_witness", "symbol_in"]

_SPLIT = re.compile(r"[./\\]+")


def module_parts(name: str) -> tuple[str, ...]:
    """``"detente.storage"`` and ``"detente/storage/"`` -> ``("detente", "storage")``."""
    return tuple(part for part in _SPLIT.split(name.strip()) if part)


def contains(outer: str, inner: str) -> bool:
    """Whether module ``outer`` is ``inner`` or one of its ancestors."""
    a, b = module_parts(outer), module_parts(inner)
    return bool(a) and b[: len(a)] == a


def meet(a: str, b: str) -> str | None:
    """The module both cover (the inner one), or None when neither contains the other."""
    if contains(a, b):
        return b
    if contains(b, a):
        return a
    return None


@cache
def module_patterns(name: str) -> tuple[str, ...]:
    """The path patterns a module resolves to (see the module docstring).

    Returns:
        ``(dir/**, dir.*, */dir/**, */dir.*)`` where ``dir`` is the parts joined by ``/``;
        empty when the name has no parts.
    """
    parts = module_parts(name)
    if not parts or any(_is_glob(p) for p in parts):
        return ()
    base = "/".join(parts)
    return (f"{base}/**", f"{base}.*", f"*/{base}/**", f"*/{base}.*")


def path_witness(module: str, pattern: str) -> str | None:
    """A path both the module and a path pattern cover, or None."""
    for own in module_patterns(module):
        try:
            witness = intersect(own, pattern)
        except Undecided:
            return own  # undecided counts as meeting; the module pattern stands in
        if witness is not None:
            return witness
    return None


def symbol_in(module: str, symbol: str) -> bool:
    """Whether a symbol's file belongs to the module."""
    path, _ = split_symbol(symbol)
    return path is not None and any(matches(p, path) for p in module_patterns(module))


def _is_glob(part: str) -> bool:
    return any(ch in part for ch in "*?[")
