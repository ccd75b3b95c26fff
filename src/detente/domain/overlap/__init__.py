"""Path-pattern overlap: normalisation, glob semantics, exact intersection, an index.

Two claims overlap when some file path matches a pattern of each. See
:mod:`~detente.domain.overlap.paths` for the pattern rules and canonical form,
:mod:`~detente.domain.overlap.globs` for the matching semantics and the witness search
(over automata built by :mod:`~detente.domain.overlap.nfa`, labelled with
:mod:`~detente.domain.overlap.charsets` sets), and :mod:`~detente.domain.overlap.index` for
the overlap index over live claims.
"""

from detente.domain.overlap.globs import (
    CompiledPattern,
    compile_pattern,
    intersect,
    intersect_compiled,
    matches,
)
from detente.domain.overlap.index import PatternIndex
from detente.domain.overlap.paths import has_wildcard, normalize_path, normalize_pattern

__all__ = [
    "CompiledPattern",
    "PatternIndex",
    "compile_pattern",
    "has_wildcard",
    "intersect",
    "intersect_compiled",
    "matches",
    "normalize_path",
    "normalize_pattern",
]
