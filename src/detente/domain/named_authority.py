"""Write authority over symbols and modules: the overlap rule, applied to one file write.

:mod:`detente.domain.authority` answers "may claim C write this file?" from the path
patterns claims hold. Claims also hold symbols (``a.py::RetryPolicy.backoff``) and
modules (``detente.storage``); a write must respect those the way claim opening does
(:mod:`detente.domain.overlap.named`), with the same containment rules
(:mod:`detente.domain.overlap.symbols`, :mod:`detente.domain.overlap.modules`):

* **a module holds its files**: a write to a file of another claim's module is refused;
* **a symbol is held inside its file**: what refuses depends on what the change touches.
  When the write names the symbols it touches (an :data:`Edit`, from
  :mod:`detente.index.diff`), it is refused exactly when a touched symbol and a held one
  meet (the same function, a class and its method). Two different functions of one file
  do not meet, and lines outside every definition (imports, module constants) touch no
  held symbol. When the write does not say what it touches, it is a write to the whole
  file, and a file contains its symbols: refused.

A claim owns a file write through its own targets as well: a file of one of its modules,
or a change that stays inside its symbols of that file (nothing touched outside them).

Pure: the edits are data computed by the service from git.
"""

from __future__ import annotations

from collections.abc import Callable

from detente.domain.claims.model import Claim
from detente.domain.overlap import modules as mods
from detente.domain.overlap import symbols as syms
from detente.domain.overlap.globs import matches
from detente.domain.state import RepoState

__all__ = ["Edit", "named_owned", "named_refusals", "touched_meets"]

Edit = tuple[tuple[str, ...], bool]
"""What a change does to one file: ``(innermost symbols touched, lines outside every
symbol changed)``, the symbols spelled ``path::Qualified.name``."""


def touched_meets(held: str, edit: Edit | None) -> bool:
    """Whether a change (``edit``; None: the whole file) reaches the held symbol ``held``.

    ``held`` lies in the file being written (the caller checks the path).
    """
    if edit is None:
        return True
    touched, _outside = edit
    return any(syms.meet(t, held) is not None for t in touched)


def _in_module(module: str, path: str) -> bool:
    return any(matches(p, path) for p in mods.module_patterns(module))


def named_refusals(
    state: RepoState,
    path: str,
    edit: Edit | None,
    refuses: Callable[[Claim], bool],
) -> dict[str, Claim]:
    """Claims whose symbols or modules refuse a write to the concrete ``path``, by id.

    Args:
        state: the repository's projection.
        path: a concrete, normalised repo-relative file path.
        edit: what the write changes in ``path``; None when unknown (the whole file).
        refuses: whether a claim's authority holds the writer off at all (holding,
            granted, no sharing resolution; :func:`detente.domain.authority.blocks`).

    Returns:
        ``claim id -> claim`` for every claim refusing the write.
    """
    found: dict[str, Claim] = {}
    held: set[str] = set()
    for symbol, holders in state.claims.symbols.items():
        if syms.split_symbol(symbol)[0] == path and touched_meets(symbol, edit):
            held |= holders
    for module, holders in state.claims.modules.items():
        if _in_module(module, path):
            held |= holders
    for claim_id in sorted(held):
        other = state.claims.get(claim_id)
        if other is not None and refuses(other):
            found[claim_id] = other
    return found


def named_owned(claim: Claim, path: str, edit: Edit | None) -> bool:
    """Whether ``claim``'s granted modules or symbols cover this write to ``path``.

    A module covers its files; symbols cover a change that touches nothing outside them
    in ``path`` (see :func:`detente.domain.overlap.symbols.stray_edits`); with no
    ``edit`` known, symbols cover nothing (the change might be anywhere in the file).
    """
    if any(_in_module(m, path) for m in claim.modules):
        return True
    if edit is None:
        return False
    stray = syms.stray_edits(claim.symbols, path, *edit)
    return stray is not None and not stray
