"""What an edit would do to the symbols of a file, read before it happens.

The payload of an edit tool says what text it replaces (:class:`~detente.harness.payloads.Change`).
Applied to the file as it is now, that gives the new text; the changed lines of both sides
(:mod:`difflib`) mapped onto each side's symbols (tree-sitter,
:func:`detente.index.extract.extract_symbols`, innermost as :mod:`detente.index.diff`
maps a commit) give the ``(symbols touched, lines outside every symbol)`` the
pre-commit operation judges (:mod:`detente.domain.named_authority`). Anything that
cannot be read (a language the index does not parse, an ``old_string`` not found or
found more than once for an edit of one occurrence, such as a Codex hunk its ``@@``
line places, an unreadable file) is left out: the file is judged whole, stricter and never looser.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from detente.harness.payloads import Change

__all__ = ["planned_edit"]


def _apply(text: str, changes: Sequence[Change]) -> str | None:
    for change in changes:
        if change.old is None:
            text = change.new
            continue
        found = text.count(change.old)
        if found == 0 or (found > 1 and not change.every):
            return None  # not found, or which occurrence is meant cannot be told
        text = text.replace(change.old, change.new, -1 if change.every else 1)
    return text


def planned_edit(
    file: Path, rel: str, changes: Sequence[Change]
) -> tuple[tuple[str, ...], bool] | None:
    """``(innermost symbols the edit touches, whether it changes lines outside every
    symbol)`` for the file at ``file`` (repo-relative ``rel``); None: judge it whole."""
    if not changes:
        return None
    from detente.index.languages import language_of

    if language_of(rel) is None:
        return None
    try:
        before = file.read_text(encoding="utf-8") if file.exists() else ""
    except (OSError, UnicodeDecodeError):
        return None
    after = _apply(before, changes)
    if after is None:
        return None
    from detente.index.extract import extract_symbols
    from detente.index.innermost import innermost

    if not before:
        return None  # a new file: judged whole
    old_symbols = extract_symbols(rel, before.encode()) or []
    new_symbols = extract_symbols(rel, after.encode()) or []
    names: set[str] = set()
    outside = False
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for symbols, lo, hi in ((old_symbols, i1, i2), (new_symbols, j1, j2)):
            if hi > lo:
                found, out = innermost(symbols, lo + 1, hi - lo)
                names |= found
                outside = outside or out
    return tuple(sorted(names)), outside
