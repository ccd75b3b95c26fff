"""Symbol targets: ``path::Qualified.name`` and what contains what.

A symbol names a definition inside a file: ``src/settlement/retry.py::RetryPolicy.backoff``
is the method ``backoff`` of the class ``RetryPolicy`` in that file (the name the symbol
index gives, see :mod:`detente.index.symbols`). Containment follows the source:

* a file contains its symbols (a path pattern matching ``path`` meets every symbol of it);
* a definition contains the definitions nested in it (``RetryPolicy`` contains
  ``RetryPolicy.backoff``; qualified names compare by whole ``.`` parts, so ``Retry``
  does not contain ``RetryPolicy``);
* two different definitions of one file (``a.py::f`` and ``a.py::g``) do not meet.

A symbol written without ``path::`` (a *bare* name the index could not place, e.g. in a
repository the server has no checkout of) is compared by qualified name alone, so it
meets any symbol of any file with a containing or contained qualified name: when the
location is unknown, assume the worst.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from detente.domain.overlap.globs import matches

__all__ = ["SEPARATOR", "contains", "meet", "path_meets", "split_symbol", "stray_edits"]

SEPARATOR: Final = "::"


def split_symbol(name: str) -> tuple[str | None, str]:
    """``"a/b.py::C.m"`` -> ``("a/b.py", "C.m")``; a bare ``"C.m"`` -> ``(None, "C.m")``.

    Surrounding whitespace of each part is removed.
    """
    path, sep, qualname = name.rpartition(SEPARATOR)
    if not sep:
        return None, name.strip()
    return path.strip() or None, qualname.strip()


def _qual_contains(outer: str, inner: str) -> bool:
    return inner == outer or inner.startswith(outer + ".")


def contains(outer: str, inner: str) -> bool:
    """Whether the definition ``outer`` contains (or is) ``inner``.

    Both are symbol names; a bare side matches any path.
    """
    outer_path, outer_q = split_symbol(outer)
    inner_path, inner_q = split_symbol(inner)
    if outer_path is not None and inner_path is not None and outer_path != inner_path:
        return False
    return _qual_contains(outer_q, inner_q)


def meet(a: str, b: str) -> str | None:
    """The symbol two symbol targets both cover, or None when they are disjoint.

    Returns:
        The more specific of the two (the contained one; ``a`` when they are equal),
        e.g. ``meet("x.py::C", "x.py::C.m") == "x.py::C.m"``.
    """
    if contains(a, b):
        return b if split_symbol(b)[0] is not None or split_symbol(a)[0] is None else a
    if contains(b, a):
        return a if split_symbol(a)[0] is not None or split_symbol(b)[0] is None else b
    return None


def path_meets(pattern: str, symbol: str) -> bool:
    """Whether a path pattern covers a symbol: it matches the symbol's file.

    A bare symbol (file unknown) is not covered by any pattern: there is no file to test,
    and the index resolves every name a claim could hold in a repository it can read.
    """
    path, _ = split_symbol(symbol)
    return path is not None and matches(pattern, path)


def stray_edits(
    claimed: Sequence[str], path: str, touched: Sequence[str], bare_lines: bool
) -> list[str] | None:
    """What a change to ``path`` did outside a claim's symbols.

    Args:
        claimed: the claim's symbols.
        path: the changed file.
        touched: the innermost symbols the change touched in it (see
            :mod:`detente.index.diff`).
        bare_lines: whether lines outside every symbol changed too.

    Returns:
        None when no claimed symbol lies in ``path`` (the symbols say nothing about it);
        else the touched symbols no claimed symbol contains, plus ``path`` itself when
        ``bare_lines`` (empty: the change stays inside the claim's symbols).
    """
    mine = [s for s in claimed if split_symbol(s)[0] == path]
    if not mine:
        return None
    stray = [t for t in touched if not any(contains(s, t) for s in mine)]
    if bare_lines:
        stray.append(path)
    return stray
